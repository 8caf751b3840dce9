import Foundation
import PhotosCore
import PhotosTestSupport
import Testing

/// `photos-admin users erase` against a database a real photosd keeps serving: the name's bytes
/// leave the SQLite file and its WAL before the command returns, while photosd goes on writing.
@Suite("users erase with photosd running", .serialized)
struct ErasureEndToEndTests {
    static let name = "zq7erasable"
    static let password = "correct horse battery"

    @Test("erase while photosd serves: sessions signed out, the name in neither the file nor the WAL, verify passes, the name is free again")
    func eraseWhileServing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await migrateDefaultDatabase(in: directory.path)
        let admin = Daemon.binDirectory + "/photos-admin"
        let db = ["--db", "data/photos.db"]
        for user in [Self.name, "keeper"] {
            let (status, output) = try await runTool(admin, ["users", "add", user, "--password-stdin"] + db, stdin: Self.password, in: directory.path)
            #expect(status == 0, "\(output)")
        }
        let daemon = try await Daemon(["--seed-demo"], in: directory.path)
        defer { _ = daemon.stop() }

        // Many sessions that sign in as the user, move about (each action rewrites the session's
        // row, which quotes the name), and a keyed sign-in whose stored answer quotes it too.
        var signedIn: [String] = []
        for index in 0..<12 {
            let (_, created) = try await daemon.request("POST", "/v1/sessions")
            let id = try #require(created["id"] as? String)
            _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"signIn"}"#)
            let (status, _) = try await daemon.request(
                "POST", "/v1/sessions/\(id)/actions", body: #"{"action":"submit","username":"\#(Self.name)","password":"\#(Self.password)"}"#,
                headers: ["Idempotency-Key": "sign-in-\(index)"])
            #expect(status == 200)
            for photo in 1...3 {
                _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":\#(photo)}"#)
                _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"back"}"#)
            }
            if index % 3 == 0 {
                _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"signOut"}"#)
            } else {
                signedIn.append(id)
            }
        }
        let (_, keptSession) = try await daemon.request("POST", "/v1/sessions")
        let kept = try #require(keptSession["id"] as? String)

        // The search below means something: the name is in the files now (the users row, the
        // sessions' states, the stored answers), as bytes.
        #expect(try Self.filesHolding(Self.name, in: directory).count > 0, "the name is not in the files before the erasure")

        // Without --yes: refused, naming what it would do; nothing changes.
        let (refused, refusal) = try await runTool(admin, ["users", "erase", Self.name] + db, in: directory.path)
        #expect(refused != 0 && refusal.contains("--yes") && refusal.contains("cannot be undone"), "\(refusal)")

        // Erase while a client keeps acting on another session.
        let load = Task {
            var statuses: [Int] = []
            for photo in 0..<200 {
                let (status, _) = try await daemon.request("POST", "/v1/sessions/\(kept)/actions", body: #"{"action":"selectPhoto","photoId":\#(photo % 3 + 1)}"#)
                statuses.append(status)
                let (back, _) = try await daemon.request("POST", "/v1/sessions/\(kept)/actions", body: #"{"action":"back"}"#)
                statuses.append(back)
            }
            return statuses
        }
        let (erased, output) = try await runTool(admin, ["users", "erase", Self.name, "--yes", "--format", "json"] + db, in: directory.path)
        #expect(erased == 0, "\(output)")
        // Read the files before anything else touches them: photosd is still running and writing.
        let holding = try Self.filesHolding(Self.name, in: directory)
        #expect(holding.isEmpty, "the erased name is still in \(holding)")
        let statuses = try await load.value
        #expect(statuses.allSatisfy { $0 == 200 }, "photosd refused actions during the erasure: \(Set(statuses))")

        let report = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        #expect(report?["sessionsSignedOut"] as? Int == signedIn.count, "\(output)")
        // Every session that was signed in as them is signed out, its events show no name.
        for id in signedIn {
            let (_, session) = try await daemon.request("GET", "/v1/sessions/\(id)")
            #expect(session["user"] == nil || session["user"] is NSNull, "\(session)")
        }
        let (_, events) = try await daemon.request("GET", "/v1/sessions/\(signedIn[0])/events?limit=1000")
        let rows = events["events"] as? [[String: Any]] ?? []
        #expect(!rows.isEmpty && rows.allSatisfy { $0["username"] == nil || $0["username"] is NSNull }, "\(rows.prefix(3))")

        let (verified, verifyOutput) = try await runTool(admin, ["audit", "verify"] + db, in: directory.path)
        #expect(verified == 0 && verifyOutput.contains("redacted"), "\(verifyOutput)")

        // The name is free again, for someone who shares nothing with the erased user.
        let (added, addOutput) = try await runTool(admin, ["users", "add", Self.name, "--password-stdin"] + db, stdin: "another password", in: directory.path)
        #expect(added == 0, "\(addOutput)")
        let (_, fresh) = try await daemon.request("POST", "/v1/sessions")
        let freshID = try #require(fresh["id"] as? String)
        _ = try await daemon.request("POST", "/v1/sessions/\(freshID)/actions", body: #"{"action":"signIn"}"#)
        let (old, _) = try await daemon.request(
            "POST", "/v1/sessions/\(freshID)/actions", body: #"{"action":"submit","username":"\#(Self.name)","password":"\#(Self.password)"}"#)
        #expect(old == 401, "the erased user's password still signs in")
    }

    @Test("on either store, erase while photosd serves: the name in no stored byte (SQLite's files; PostgreSQL's dump and log), verify passes", arguments: TestStore.all)
    func eraseWhileServingOnEitherStore(store: TestStore) async throws {
        let harness = try await ServerHarness.make(store)
        defer { harness.close() }
        let database = harness.configuration.databasePath
        let admin = Daemon.binDirectory + "/photos-admin"
        let env = ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": harness.configuration.auditSigningKeyPath, "PHOTOSD_AUTH_BCRYPT_COST": "4"]
        let (added, addOutput) = try await runTool(admin, ["users", "add", Self.name, "--password-stdin", "--db", database], stdin: Self.password, in: harness.directory.path, environment: env)
        #expect(added == 0, "\(addOutput)")
        let daemon = try await Daemon(["--db", database], in: harness.directory.path, environment: env)
        defer { _ = daemon.stop() }
        for index in 0..<4 {
            let (_, created) = try await daemon.request("POST", "/v1/sessions")
            let id = try #require(created["id"] as? String)
            _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"signIn"}"#)
            let (status, _) = try await daemon.request(
                "POST", "/v1/sessions/\(id)/actions", body: #"{"action":"submit","username":"\#(Self.name)","password":"\#(Self.password)"}"#,
                headers: ["Idempotency-Key": "k\(index)"])
            #expect(status == 200)
            _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":2}"#)
        }
        #expect(try await Self.storedBytes(harness).range(of: Data(Self.name.utf8)) != nil, "the name is not stored before the erasure")

        let (erased, output) = try await runTool(admin, ["users", "erase", Self.name, "--yes", "--db", database], in: harness.directory.path, environment: env)
        #expect(erased == 0, "\(output)")
        #expect(output.contains("signed out 4 sessions"), "\(output)")
        // photosd still running: what is stored now holds no trace of the name.
        #expect(try await Self.storedBytes(harness).range(of: Data(Self.name.utf8)) == nil, "the erased name is still stored")
        let (status, _) = try await daemon.request("POST", "/v1/sessions")
        #expect(status == 201)
        let (verified, verifyOutput) = try await runTool(admin, ["audit", "verify", "--db", database], in: harness.directory.path, environment: env)
        #expect(verified == 0 && verifyOutput.contains("redacted"), "\(verifyOutput)")
    }

    /// What the store keeps, as bytes: SQLite's database files, or a dump of the PostgreSQL
    /// database followed by the server's log.
    static func storedBytes(_ harness: ServerHarness) async throws -> Data {
        if let postgres = harness.postgres {
            var bytes = try await postgres.dump()
            bytes.append(PostgresTestDatabase.serverLog() ?? Data())
            return bytes
        }
        let path = harness.configuration.databasePath
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] { bytes.append(FileManager.default.contents(atPath: path + suffix) ?? Data()) }
        return bytes
    }

    /// The database's files (the file, its WAL, its shared-memory index) that hold `text`'s bytes.
    static func filesHolding(_ text: String, in directory: TemporaryDirectory) throws -> [String] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.file("data")).filter { $0.hasPrefix("photos.db") }
        return files.filter { file in
            FileManager.default.contents(atPath: directory.file("data/\(file)"))?.range(of: Data(text.utf8)) != nil
        }
    }
}
