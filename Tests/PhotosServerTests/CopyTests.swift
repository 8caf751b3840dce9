import DatabaseAccess
import Foundation
import Hummingbird
import HummingbirdTesting
import PhotosCore
import PhotosStorage
@testable import PhotosServer
import PhotosTestSupport
import Synchronization
import Testing
import PhotosModel

/// `photos-admin copy --to`: a whole database into an empty one of either kind, run as the real
/// binary, compared row by row, then served on.
@Suite("photos-admin copy --to", .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
struct CopyTests {
    static let admin = BuiltProducts.binDirectory + "/photos-admin"

    static func keyed(_ key: String) -> HTTPFields { [.contentType: "application/json", HTTPFields.idempotencyKey: key] }

    /// Every row of every table but `schema_migrations`, as text, sorted (the stores order text
    /// differently), by table; columns by name (their order may differ between dialects).
    static func contents(of configuration: PhotosConfiguration) async throws -> [String: [String]] {
        let database = try await PhotosDatabase.open(configuration, readerCount: 1, migrate: false)
        do {
            let contents = try await database.read { connection in
                var tables: [String: [String]] = [:]
                for table in try await connection.tableNames() where table != "schema_migrations" {
                    let columns = try await connection.columnNames(of: table).sorted()
                    let rows = try await connection.query("SELECT \(raw: columns.map { "\"\($0)\"" }.joined(separator: ", ")) FROM \"\(raw: table)\"")
                    tables[table] = rows.map { row in row.values.map { "\($0)" }.joined(separator: " | ") }.sorted()
                }
                return tables
            }
            await database.close()
            return contents
        } catch {
            await database.close()
            throw error
        }
    }

    /// Runs photos-admin with `arguments` in `directory`, signing with the harness's key.
    static func run(_ arguments: [String], _ harness: ServerHarness) async throws -> ProcessResult {
        try await runProcess(admin, arguments, in: harness.directory.path, environment: [
            "PHOTOSD_AUDIT_SIGNING_KEY_PATH": harness.configuration.auditSigningKeyPath,
            "PHOTOSD_AUTH_SECRET_KEY_PATH": harness.configuration.resolvedSecretKeyPath,
        ])
    }

    @Test("SQLite → PostgreSQL → SQLite: every row as it was, audit verify passes, the copy serves on; a non-empty target or the same database is refused")
    func roundTrip() async throws {
        let source = try await ServerHarness.make(.sqlite)
        defer { source.close() }
        let postgres = try await PostgresTestDatabase.create()
        defer { Task { await postgres.drop() } }

        // Some of everything: sessions in and out of the buy flow, a sign-in, a purchase with an
        // Idempotency-Key, a failed sign-in, then a checkpoint and funnel marks.
        let session = Mutex<(buyer: String, browser: String, firstBuy: String)>(("", "", ""))
        try await source.test { client in
            let buyer = try await client.newSession()
            _ = try await client.act(buyer, #"{"action": "selectPhoto", "photoId": 3}"#)
            _ = try await client.act(buyer, #"{"action": "buy"}"#)
            _ = try await client.act(buyer, #"{"action": "submit", "username": "alice", "password": "correct horse"}"#)
            let bought = try await client.act(buyer, #"{"action": "buy"}"#, headers: Self.keyed("buy-once"))
            #expect(bought.json["outcome"] as? String == "purchased")
            let browser = try await client.newSession()
            _ = try await client.act(browser, #"{"action": "selectPhoto", "photoId": 1}"#)
            _ = try await client.act(browser, #"{"action": "back"}"#)
            let failing = try await client.newSession()
            _ = try await client.act(failing, #"{"action": "selectPhoto", "photoId": 2}"#)
            _ = try await client.act(failing, #"{"action": "buy"}"#)
            let failed = try await client.act(failing, #"{"action": "submit", "username": "bob", "password": "not it"}"#)
            #expect(failed.status == .unauthorized)
            session.withLock { $0 = (buyer, browser, bought.text) }
        }
        let db = ["--db", source.configuration.databasePath]
        await #expect(try Self.run(["audit", "checkpoint"] + db, source).status == 0)
        await #expect(try Self.run(["report", "funnel"] + db, source).status == 0)
        let original = try await Self.contents(of: source.configuration)
        // The test application wrote one at shutdown, the command another.
        let checkpoints = original["audit_checkpoints"]?.count ?? 0
        #expect(checkpoints >= 2)
        #expect(original["funnel_marks"]?.isEmpty == false)
        #expect(original["idempotency_keys"]?.count == 1)

        // SQLite → PostgreSQL.
        let url = postgres.url(password: "pw-never-shown")
        let copied = try await Self.run(["copy", "--to", url] + db, source)
        #expect(copied.status == 0, "\(copied.output)")
        #expect(copied.stdout.contains("audit trail intact on the copy"), "\(copied.stdout)")
        #expect(copied.stdout.contains("\(checkpoints) checkpoints verified"), "\(copied.stdout)")
        #expect(!copied.output.contains("pw-never-shown"))
        var onPostgres = source.configuration
        onPostgres.databasePath = url
        onPostgres.secretKeyPath = source.configuration.resolvedSecretKeyPath
        // As ServerHarness gives every PostgreSQL harness: under the whole suite on two cores a
        // connection took over the 3 s default once (a 503 where the test wanted the sign-in's 401).
        onPostgres.statementTimeoutSeconds = 10
        #expect(try await Self.contents(of: onPostgres) == original)

        // Refusals: a target with rows, the same database twice. Nothing changes.
        let again = try await Self.run(["copy", "--to", url] + db, source)
        #expect(again.status != 0)
        #expect(again.stderr.split(separator: "\n").count == 1, "\(again.stderr)")
        #expect(again.stderr.contains("is not empty"), "\(again.stderr)")
        #expect(!again.output.contains("pw-never-shown"))
        let itself = try await Self.run(["copy", "--to", source.configuration.databasePath] + db, source)
        #expect(itself.status != 0)
        #expect(itself.stderr.contains("same database"), "\(itself.stderr)")
        #expect(try await Self.contents(of: onPostgres) == original)

        // The copy serves on: a retried buy gets its first answer, the sessions continue where
        // they were, new ids follow the copied ones, a failed sign-in is counted in the table.
        let served = ServerHarness(directory: source.directory, configuration: onPostgres, postgres: postgres)
        let (buyer, browser, firstBuy) = session.withLock { $0 }
        try await served.test { client in
            let retried = try await client.act(buyer, #"{"action": "buy"}"#, headers: Self.keyed("buy-once"))
            #expect(retried.text == firstBuy)
            let next = try await client.act(browser, #"{"action": "selectPhoto", "photoId": 4, "expectVersion": 3}"#)
            #expect(next.status == .ok, "\(next.text)")
            let other = try await client.newSession()
            _ = try await client.act(other, #"{"action": "selectPhoto", "photoId": 5}"#)
            _ = try await client.act(other, #"{"action": "buy"}"#)
            let failed = try await client.act(other, #"{"action": "submit", "username": "alice", "password": "wrong"}"#)
            #expect(failed.status == .unauthorized)
        }
        let added = try await runProcess(Self.admin, ["users", "add", "carol", "--password-stdin", "--db", url], stdin: "carol's password\n", in: source.directory.path)
        #expect(added.status == 0, "\(added.output)")
        let carol = try await served.query("SELECT id FROM users WHERE username = 'carol'").first?.int(0)
        #expect(carol == 3, "the identity sequence did not continue after the copied ids")
        #expect(try await served.query("SELECT count(*) FROM sign_in_attempts").first?.int(0) == 1)
        let db2 = ["--db", url]
        await #expect(try Self.run(["audit", "checkpoint"] + db2, source).status == 0)
        let verified = try await Self.run(["audit", "verify"] + db2, source)
        #expect(verified.status == 0, "\(verified.output)")
        let checkpointsNow = try await served.query("SELECT count(*) FROM audit_checkpoints").first?.int(0) ?? 0
        #expect(checkpointsNow >= checkpoints + 2, "the served copy's shutdown and the command's")
        #expect(verified.stdout.contains("\(checkpointsNow) checkpoints verified"), "\(verified.stdout)")

        // PostgreSQL → SQLite, now with rows only PostgreSQL had (sign-in attempts, …).
        let grown = try await Self.contents(of: onPostgres)
        // Like migrate, copy creates its target file only in a directory that exists.
        let file = source.directory.file("copy/back.db")
        let refused = try await Self.run(["copy", "--to", file] + db2, source)
        #expect(refused.status != 0 && refused.stderr.contains("no directory"), "\(refused.output)")
        try FileManager.default.createDirectory(atPath: source.directory.file("copy"), withIntermediateDirectories: false)
        let back = try await Self.run(["copy", "--to", file] + db2, source)
        #expect(back.status == 0, "\(back.output)")
        #expect(back.stdout.contains("\(checkpointsNow) checkpoints verified"), "\(back.stdout)")
        var onFile = onPostgres
        onFile.databasePath = file
        #expect(try await Self.contents(of: onFile) == grown)
        let check = try await Self.run(["check", "--db", file], source)
        #expect(check.status == 0, "\(check.output)")
    }

    @Test(
        "a copy that fails midway (the target's disk fills) is one clear line, leaves no file behind, and succeeds once there is room",
        .enabled(if: SmallDisk.canMount, "needs permission to mount a tmpfs (root on Linux)"))
    func failedCopyLeavesNothing() async throws {
        let postgres = try await PostgresTestDatabase.create()
        defer { Task { await postgres.drop() } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = postgres.url(password: "pw-never-shown")
        // ~4 MB of photos: far more than 2 MB of database and WAL hold, so the target's disk
        // fills while the source is still sending (the reader must be let go, not left waiting).
        var csv = "title,url,price\n"
        for index in 1...50_000 { csv += "Photo number \(index),https://photos.example.com/p/\(index).jpg,\(index % 90 + 1).25\n" }
        try csv.write(toFile: directory.file("big.csv"), atomically: true, encoding: .utf8)
        let imported = try await runProcess(Self.admin, ["photos", "import", "big.csv", "--db", url], in: directory.path)
        #expect(imported.status == 0, "\(imported.output)")

        let disk = try SmallDisk(at: directory.file("small"), megabytes: 2)
        defer { disk.unmount() }
        let failed = try await runProcess(Self.admin, ["copy", "--to", "small/copy.db", "--db", url], in: directory.path)
        #expect(failed.status != 0)
        #expect(failed.stderr.split(separator: "\n").count == 1, "\(failed.stderr)")
        #expect(failed.stderr.contains("full"), "\(failed.stderr)")
        #expect(!failed.output.contains("pw-never-shown"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("small")).isEmpty, "a failed copy left a file behind")

        #expect(disk.grow(toMegabytes: 64))
        let copied = try await runProcess(Self.admin, ["copy", "--to", "small/copy.db", "--db", url], in: directory.path)
        #expect(copied.status == 0, "\(copied.output)")
        #expect(copied.stdout.contains("50000 photos"), "\(copied.stdout)")
        let listed = try await runProcess(Self.admin, ["check", "--db", "small/copy.db"], in: directory.path)
        #expect(listed.status == 0, "\(listed.output)")
    }
}
