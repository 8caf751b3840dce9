import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import PostgresNIO
import PostgresStore
import SchemaMigrations
import SQLiteStore
import Testing

/// The PostgreSQL migrations and migrator on a real server.
@Suite("PostgreSQL migrations", .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
struct PostgresMigratorTests {
    static let logger = PostgresTestDatabase.logger
    static let migrator = PostgresMigrator(migrations: PhotosMigrations.postgres)

    @Test("a fresh database gets every migration once; a second run applies nothing; status says so")
    func migratesOnce() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        try await database.withClient { client in
            let first = try await Self.migrator.migrate(client, logger: Self.logger)
            #expect(first.map(\.name) == PhotosMigrations.postgres.map(\.name))
            #expect(try await Self.migrator.migrate(client, logger: Self.logger).isEmpty)
            let status = try await Self.migrator.status(client, logger: Self.logger)
            #expect(status.allSatisfy { $0.appliedAt?.hasSuffix("Z") == true })
        }
    }

    // Without the lock the racing instances fail on each other's DDL (PostgreSQL ends a deadlock
    // between them with an error), and the count below fails. The limit only keeps a hang from
    // stalling the run: it is wall time, and in a full run (hundreds of tests on two cores, some
    // waiting on child processes) this 2-second test has waited over a minute for a thread.
    @Test("instances starting together apply each migration once (the advisory lock)", .timeLimit(.minutes(5)))
    func concurrentInstances() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let applied = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask { try await database.withClient { client in try await Self.migrator.migrate(client, logger: Self.logger).map(\.name) } }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(applied.sorted() == PhotosMigrations.postgres.map(\.name).sorted(), "applied more or less than once: \(applied)")
        let rows = try await database.withClient { client in
            var count = 0
            for try await value in try await client.query("SELECT count(*) FROM schema_migrations", logger: Self.logger).decode(Int.self) { count = value }
            return count
        }
        #expect(rows == PhotosMigrations.postgres.count)
    }

    @Test("an edited migration, or a database newer than the binary, is refused and nothing is applied")
    func refusals() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        try await database.withClient { client in
            let known = PhotosMigrations.postgres
            try await PostgresMigrator(migrations: Array(known.prefix(2))).migrate(client, logger: Self.logger)
            var edited = known
            edited[0] = Migration(version: edited[0].version, name: edited[0].name, sql: edited[0].sql + "\n-- edited\n")
            let editError = await #expect(throws: MigrationError.self) { try await PostgresMigrator(migrations: edited).migrate(client, logger: Self.logger) }
            #expect(editError?.description.contains("was changed after it was applied") == true)
            let older = await #expect(throws: MigrationError.self) { try await PostgresMigrator(migrations: Array(known.prefix(1))).migrate(client, logger: Self.logger) }
            #expect(older?.description.contains("is newer than this binary") == true)
            // Nothing past the first two was applied by the refused runs.
            let status = try await Self.migrator.status(client, logger: Self.logger)
            #expect(status.map { $0.appliedAt != nil } == [true, true] + Array(repeating: false, count: known.count - 2))
        }
    }

    @Test("the audit tables refuse UPDATE, DELETE and TRUNCATE")
    func appendOnly() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        try await database.withClient { client in
            try await Self.migrator.migrate(client, logger: Self.logger)
            try await client.query(
                """
                INSERT INTO audit_events (session_id, seq, at, actor, step, prev_hash, hash)
                VALUES ('operator', 1, '2026-11-22T00:00:00.000Z', 'system', 'photo.added', 'p', 'h')
                """, logger: Self.logger)
            for statement in ["UPDATE audit_events SET actor = 'x'", "DELETE FROM audit_events", "TRUNCATE audit_events",
                              "TRUNCATE audit_checkpoints", "TRUNCATE audit_cosignatures", "UPDATE audit_chain_cutover SET global_chain_until_id = 5"] {
                do {
                    try await client.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger)
                    Issue.record("\(statement) was allowed")
                } catch {
                    let text = PostgresStoreError(describing: error, doing: statement).description
                    #expect(text.contains("refused"), "\(text)")
                }
            }
            var count = 0
            for try await value in try await client.query("SELECT count(*) FROM audit_events", logger: Self.logger).decode(Int.self) { count = value }
            #expect(count == 1)
        }
    }

    @Test("the contract's views exist with the same columns as on SQLite")
    func sameViews() async throws {
        let sqlite = try TestDatabase()
        defer { sqlite.close() }
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        try await database.withClient { client in
            try await Self.migrator.migrate(client, logger: Self.logger)
            for view in ["audit_trail", "purchase_funnel", "buy_exits"] {
                let expected = try await sqlite.database.read { connection in
                    try await connection.query("SELECT name FROM pragma_table_info(\(view))").map { try $0.string(0) }
                }
                var columns: [String] = []
                let rows = try await client.query(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = \(view) ORDER BY ordinal_position", logger: Self.logger)
                for try await name in rows.decode(String.self) { columns.append(name) }
                #expect(!expected.isEmpty)
                #expect(columns == expected, "\(view)")
            }
        }
    }
}

/// What the binaries do with a `postgres://` database today: `photos-admin migrate` prepares it;
/// everything else refuses it clearly instead of taking the URL for a file name.
@Suite("postgres:// URLs in photosd and photos-admin", .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
struct PostgresURLCommandTests {
    /// The test database's URL, with a password (the test server trusts loopback and ignores it).
    static func url(_ database: PostgresTestDatabase) -> String {
        "postgres://postgres:pw-never-shown@\(database.location.host ?? "127.0.0.1"):\(database.location.port)/\(database.name)"
    }

    @Test("photos-admin migrate applies the PostgreSQL migrations once, naming the database without its password")
    func adminMigrates() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = Self.url(database)
        for _ in 0..<2 {
            let result = try await runProcess(BuiltProducts.binDirectory + "/photos-admin", ["migrate", "--db", url], in: directory.path)
            #expect(result.status == 0, "\(result.output)")
            #expect(result.stdout.contains("is at schema version \(PhotosMigrations.postgres.last?.version ?? 0)"))
            #expect(!result.output.contains("pw-never-shown"))
        }
        let status = try await database.withClient { client in
            try await PostgresMigrator(migrations: PhotosMigrations.postgres).status(client, logger: PostgresTestDatabase.logger)
        }
        #expect(status.allSatisfy { $0.appliedAt != nil })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "a URL was taken for a file name")
    }

    @Test("photos-admin works on PostgreSQL as on SQLite; file-only commands say so in one line; never the password")
    func adminOnPostgres() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = Self.url(database)
        let error = #expect(throws: PhotosError.self) { try PhotosDatabase.open(path: url) }
        #expect(error?.message.contains("needs a SQLite file") == true)
        #expect(error?.message.contains("pw-never-shown") == false)
        try "title,url,price\nA,https://example.com/a.jpg,1.00\nB,,2.50\n".write(toFile: directory.file("photos.csv"), atomically: true, encoding: .utf8)
        let admin = BuiltProducts.binDirectory + "/photos-admin"
        let steps: [(arguments: [String], stdin: String, output: String)] = [
            (["migrate"], "", "is at schema version"),
            (["photos", "import", "photos.csv"], "", "2"),
            (["photos", "add", "--title", "C", "--price", "3.00"], "", ""),
            (["users", "add", "alice", "--password-stdin"], "correct horse battery\n", "alice"),
            (["users", "list"], "", "alice"),
            (["purchase", "alice", "1"], "", ""),
            (["purchase", "alice", "1"], "", "already owns photo 1"),
            (["audit", "--session", "operator"], "", "purchase.completed"),
            (["audit", "checkpoint"], "", ""),
            (["audit", "verify"], "", "audit trail intact"),
            (["check"], "", "audit: intact"),
            (["sessions", "list"], "", ""),
            (["report", "funnel"], "", ""),
        ]
        for step in steps {
            let result = try await runProcess(admin, step.arguments + ["--db", url], stdin: step.stdin, in: directory.path)
            #expect(result.status == 0, "\(step.arguments): \(result.output)")
            #expect(step.output.isEmpty || result.stdout.contains(step.output), "\(step.arguments): \(result.stdout)")
            #expect(!result.output.contains("pw-never-shown"))
        }
        let backup = try await runProcess(admin, ["backup", "copy.db", "--db", url], in: directory.path)
        #expect(backup.status != 0)
        #expect(backup.stderr.split(separator: "\n").count == 1, "\(backup.stderr)")
        #expect(backup.stderr.contains("pg_dump"), "\(backup.stderr)")
        #expect(!backup.output.contains("pw-never-shown"))
        // The CSV and data/ (the audit signing key); nothing named after the URL.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["data", "photos.csv"], "a URL was taken for a file name")
    }
}
