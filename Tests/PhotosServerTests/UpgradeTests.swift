import DatabaseAccess
import Foundation
import PhotosTestSupport
import SQLiteStore
import Testing

/// Databases written by earlier versions, with data in them, are migrated by today's binaries:
/// `Tests/Fixtures/upgrade/VERSION/` holds one made by that version's photosd and photos-admin
/// (`scripts/make-upgrade-fixture`): users, photos, a purchase, a flow experiment, an ended
/// session moved to an archive, an erased user, checkpoints, and a session stopped on the
/// sign-in screen of a purchase.
@Suite("Upgrades from earlier versions, with data")
struct UpgradeTests {
    static let fixtures = BuiltProducts.packageRoot + "/Tests/Fixtures/upgrade"

    struct Fixture: Decodable {
        struct MidFlow: Decodable {
            var id: String
            /// nil for a version before session secrets (0.4): such a session answers `401`.
            var secret: String?
            var username: String
            var password: String
        }
        var version: String
        var commit: String
        /// Whether the version could archive (then `archive-1.sqlite` is there) and erase.
        var archived: Bool
        var erasedBob: Bool
        /// Where the version kept its signing key when not beside the database (0.2:
        /// `data/audit-signing.key`); the fixture holds it where the upgrade moves it.
        var signingKeyKeptAt: String?
        var midFlowSession: MidFlow
    }

    static var versions: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixtures)) ?? []).sorted()
    }

    /// The versions that ran on PostgreSQL (0.1.0 knew SQLite only: it has no dump).
    static var postgresVersions: [String] {
        versions.filter { FileManager.default.fileExists(atPath: fixtures + "/" + $0 + "/postgres/dump.sql") }
    }

    @Test("each earlier version's SQLite database: migrate, check and audit verify (with its archive) pass; the session stopped mid-purchase resumes on its screen and completes the purchase", arguments: versions)
    func sqlite(version: String) async throws {
        let directory = try Self.copy(version, "sqlite")
        defer { directory.remove() }
        try #require(FileManager.default.fileExists(atPath: directory.file("photos.db")), "the fixture's photos.db is missing (is it in git?)")
        try await Self.upgrade(version, in: directory, database: "photos.db", environment: [:])
    }

    @Test("each earlier version's PostgreSQL database (its pg_dump restored): the same", .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason), arguments: postgresVersions)
    func postgres(version: String) async throws {
        let directory = try Self.copy(version, "postgres")
        defer { directory.remove() }
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let bin = try #require(((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).sorted().last)
        let restored = try await runProcess(
            "/usr/lib/postgresql/\(bin)/bin/psql", ["-q", "-v", "ON_ERROR_STOP=1", "-f", directory.file("dump.sql"), database.url()], in: directory.path)
        try #require(restored.status == 0, "\(restored.output)")
        // With a URL the keys are wherever the configuration says: here, beside the dump.
        try await Self.upgrade(version, in: directory, database: database.url(), environment: [
            "PHOTOSD_AUDIT_SIGNING_KEY_PATH": directory.file("audit-signing.key"), "PHOTOSD_AUTH_SECRET_KEY_PATH": directory.file("photosd-secret.key"),
        ])
    }

    @Test("every earlier version the changelog names has its fixture")
    func everyVersionHasAFixture() throws {
        let changelog = try String(contentsOfFile: BuiltProducts.packageRoot + "/CHANGELOG.md", encoding: .utf8)
        let named = changelog.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("## ["), let end = line.firstIndex(of: "]") else { return nil }
            let version = String(line[line.index(line.startIndex, offsetBy: 4)..<end])
            return version == "Unreleased" ? nil : version
        }
        // The newest entry is this version; every one before it was written by binaries of its own.
        #expect(named.count >= 5, "\(named)")
        #expect(Set(named.dropFirst()) == Set(Self.versions), "changelog \(named), fixtures \(Self.versions)")
    }

    /// The fixture of `version` for `store`, copied into a new directory.
    static func copy(_ version: String, _ store: String) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let source = fixtures + "/" + version + "/" + store
        for file in try FileManager.default.contentsOfDirectory(atPath: source) {
            try FileManager.default.copyItem(atPath: source + "/" + file, toPath: directory.file(file))
            // git keeps no 0600: the keys as an operator keeps them.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.file(file))
        }
        return directory
    }

    /// Today's photos-admin and photosd on the fixture's database.
    static func upgrade(_ version: String, in directory: TemporaryDirectory, database: String, environment: [String: String]) async throws {
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: URL(fileURLWithPath: directory.file("fixture.json"))))
        #expect(fixture.version == version)
        let admin = BuiltProducts.binDirectory + "/photos-admin"
        func run(_ arguments: [String]) async throws -> ProcessResult {
            try await runProcess(admin, arguments + ["--db", database], in: directory.path, environment: environment)
        }
        if let kept = fixture.signingKeyKeptAt {
            // The move is the upgrade's step, as the changelog tells it.
            let changelog = try String(contentsOfFile: BuiltProducts.packageRoot + "/CHANGELOG.md", encoding: .utf8)
            #expect(changelog.contains("move `\(kept)` beside the database"), "\(version): CHANGELOG.md does not say to move \(kept)")
        }
        // An operator's first commands, before migrate (which cannot be undone): check names what is
        // pending (exit 1, no SQL error), and a SQLite file backs up as it is.
        let before = try await run(["check"])
        #expect(
            before.status == 1 && before.stdout.contains("migrations pending: ")
                && !["SQL logic error", "SQLite error", "PSQLError", "does not exist", "no such"].contains(where: before.output.contains),
            "\(version): \(before.output)")
        if !database.hasPrefix("postgres") {
            let copy = directory.file("before-migrate.db")
            let backup = try await run(["backup", copy])
            #expect(backup.status == 0, "\(version): \(backup.output)")
            let original = try Connection(path: directory.file(database), mode: .readOnly), copied = try Connection(path: copy, mode: .readOnly)
            let schema: SQL = "SELECT type, name, sql FROM sqlite_schema ORDER BY name"
            let originalSchema = try original.query(schema).map { try $0.optionalString("sql") }
            let copiedSchema = try copied.query(schema).map { try $0.optionalString("sql") }
            #expect(originalSchema == copiedSchema && !originalSchema.isEmpty, "\(version): the copy has another schema")
            original.close()
            copied.close()
            let copyCheck = try await runProcess(admin, ["check", "--db", copy], in: directory.path, environment: environment)
            #expect(copyCheck.status == 1 && copyCheck.stdout.contains("migrations pending: "), "\(version): \(copyCheck.output)")
        }
        let migrated = try await run(["migrate"])
        #expect(migrated.status == 0, "\(version): \(migrated.output)")
        let check = try await run(["check"])
        // A version that signed checkpoints left its key, which must fit; 0.1.0 had the chain
        // alone, and photosd makes the key at its first start (below).
        let keyed = FileManager.default.fileExists(atPath: directory.file("audit-signing.key"))
        #expect(check.status == 0 && check.stdout.contains(keyed ? "signing key: fits" : "signing key: none at"), "\(version): \(check.output)")
        let archives = fixture.archived ? ["--archive", directory.file("archive-1.sqlite")] : []
        let verify = try await run(["audit", "verify"] + archives)
        #expect(verify.status == 0, "\(version): \(verify.output)")
        if fixture.archived { #expect(verify.stdout.contains("archives: 1 archive verified"), "\(verify.output)") }
        let users = try await run(["users", "list", "--format", "json"])
        #expect(users.stdout.contains("\"alice\"") && users.stdout.contains("\"bob\"") != fixture.erasedBob, "\(users.output)")

        // The session stopped mid-purchase goes on where it was (idle expiry off: the fixture is old).
        let daemon = try await Daemon(
            ["--db", database], in: directory.path, environment: environment.merging(["PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "0"]) { $1 })
        var session = fixture.midFlowSession
        if session.secret == nil {
            // Made before sessions had secrets: refused as docs/deploy.md says; its app starts a new
            // one, which goes the same way to the sign-in screen.
            let (old, body) = try await daemon.request("GET", "/v1/sessions/\(session.id)", headers: ["Authorization": "Session any-secret"])
            #expect(old == 401 && "\(body)".contains("before sessions had secrets"), "\(version): \(old) \(body)")
            let (created, fresh) = try await daemon.request("POST", "/v1/sessions")
            #expect(created == 201)
            session.id = try #require(fresh["id"] as? String)
            session.secret = fresh["sessionSecret"] as? String
            for body in [#"{"action":"selectPhoto","photoId":3}"#, #"{"action":"buy"}"#] {
                #expect(try await daemon.request("POST", "/v1/sessions/\(session.id)/actions", body: body).0 == 200)
            }
        }
        let auth = ["Authorization": "Session \(session.secret ?? "")"]
        let (status, state) = try await daemon.request("GET", "/v1/sessions/\(session.id)", headers: auth)
        #expect(status == 200, "\(version): \(state)")
        #expect((state["top"] as? [String: Any])?["screen"] as? String == "signIn", "\(version): \(state["top"] ?? "none")")
        let (submitted, afterSubmit) = try await daemon.request(
            "POST", "/v1/sessions/\(session.id)/actions",
            body: #"{"action":"submit","username":"\#(session.username)","password":"\#(session.password)"}"#, headers: auth)
        #expect(submitted == 200, "\(version): \(afterSubmit)")
        var outcome = afterSubmit["outcome"] as? String
        for _ in 0..<3 where outcome != "purchased" {
            let (_, answer) = try await daemon.request("POST", "/v1/sessions/\(session.id)/actions", body: #"{"action":"buy"}"#, headers: auth)
            outcome = answer["outcome"] as? String
        }
        #expect(outcome == "purchased", "\(version): the resumed purchase did not complete")
        #expect(daemon.stop() == 0)
        let after = try await run(["audit", "verify"] + archives)
        #expect(after.status == 0, "\(version): after serving: \(after.output)")
        // The rows the old version wrote became leaves of the log (in id order, at the first
        // checkpoint), and the resumed session has a receipt that checks out offline.
        #expect(after.stdout.contains("transparency log: "), "\(version): \(after.output)")
        let key = try await run(["audit", "key", "--note"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let proved = try await run(["audit", "prove", "--session", session.id, "--out", directory.file("receipt.json")])
        #expect(proved.status == 0, "\(version): \(proved.output)")
        let checked = try await runProcess(admin, ["audit", "check-receipt", directory.file("receipt.json"), "--key", key], in: directory.path)
        #expect(checked.status == 0 && checked.stdout.contains("receipt verified"), "\(version): \(checked.output)")
    }
}
