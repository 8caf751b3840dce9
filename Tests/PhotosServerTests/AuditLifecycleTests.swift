import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import Testing

/// The trail's proofs at the lifecycle's edges (the third hardening round), against a real
/// photosd and photos-admin on both stores: what an archive of everything leaves behind.
@Suite("Audit trail across the lifecycle", .serialized)
struct AuditLifecycleTests {
    static let admin = Daemon.binDirectory + "/photos-admin"

    @Test("an archive of everything a quiet database holds: new rows take new ids, the reserved trails go on, checkpoints cover the new trails and verify names their tampering", arguments: TestStore.all)
    func archiveEverythingThenGoOn(store: TestStore) async throws {
        let harness = try await ServerHarness.make(store)
        defer { harness.close() }
        let database = harness.configuration.databasePath
        let env = [
            "PHOTOSD_AUDIT_SIGNING_KEY_PATH": harness.configuration.auditSigningKeyPath, "PHOTOSD_AUTH_BCRYPT_COST": "4",
            "PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "2",
        ]
        func admin(_ arguments: [String]) async throws -> (Int32, String) {
            try await runTool(Self.admin, arguments + ["--db", database], in: harness.directory.path, environment: env)
        }
        func sessions(_ daemon: Daemon, _ count: Int) async throws -> [String] {
            var ids: [String] = []
            for index in 0..<count {
                let (_, created) = try await daemon.request("POST", "/v1/sessions")
                let id = try #require(created["id"] as? String)
                _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":\#(index % 3 + 1)}"#)
                _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"back"}"#)
                ids.append(id)
            }
            return ids
        }

        // Sessions that end, a sign-in on the token API (`api`), an operator's command (`operator`).
        var daemon = try await Daemon(["--db", database, "--seed-demo"], in: harness.directory.path, environment: env)
        let old = try await sessions(daemon, 3)
        let (signedIn, _) = try await daemon.request("POST", "/v1/auth/sign-in", body: #"{"username":"alice","password":"\#(ServerHarness.password)"}"#)
        #expect(signedIn == 200)
        try await Task.sleep(for: .seconds(2.5))
        for id in old { #expect(try await daemon.request("GET", "/v1/sessions/\(id)").0 == 410) }
        #expect(daemon.stop() == 0)

        // Quiet: archive everything.
        let live = try await PhotosDatabase.open(harness.configuration)
        defer { Task { await live.close() } }
        let newestArchived = try await Self.count(live, "SELECT max(id) FROM audit_events")
        let path = harness.directory.file("everything.sqlite")
        let (archived, output) = try await admin(["audit", "archive", "--before", ISO8601Timestamp.string(from: Date()), "--to", path])
        #expect(archived == 0, "\(output)")
        #expect(try await Self.count(live, "SELECT count(*) FROM audit_events") == 0, "the archive left rows behind")

        // The operator trail and the api trail go on from their archived heads.
        let (added, addedOutput) = try await runTool(
            Self.admin, ["users", "add", "carol", "--password-stdin", "--db", database], stdin: "carol's long password", in: harness.directory.path, environment: env)
        #expect(added == 0, "\(addedOutput)")
        let (verifiedOperator, operatorOutput) = try await admin(["audit", "verify"])
        #expect(verifiedOperator == 0, "the operator trail restarted after its archive: \(operatorOutput)")

        daemon = try await Daemon(["--db", database], in: harness.directory.path, environment: env)
        let (signedInAgain, _) = try await daemon.request("POST", "/v1/auth/sign-in", body: #"{"username":"alice","password":"\#(ServerHarness.password)"}"#)
        #expect(signedInAgain == 200)
        let new = try await sessions(daemon, 3)
        #expect(daemon.stop() == 0)  // writes a checkpoint at shutdown

        // New ids only, every consumer's cursor moves on: `audit --after`, the checkpoint.
        #expect(try await Self.count(live, "SELECT min(id) FROM audit_events") > newestArchived, "an archived row's id was given again")
        let (shown, shownOutput) = try await admin(["audit", "--after", String(newestArchived), "--format", "json"])
        #expect(shown == 0)
        for id in new { #expect(shownOutput.contains(id), "audit --after \(newestArchived) does not show \(id)") }
        let covered = try await Self.count(live, "SELECT max(covers_until_id) FROM audit_checkpoints")
        #expect(covered >= (try await Self.count(live, "SELECT max(id) FROM audit_events")), "the last checkpoint does not cover the new rows")
        let (verified, verifyOutput) = try await admin(["audit", "verify"])
        #expect(verified == 0, "\(verifyOutput)")

        // A new trail's newest rows removed, then a whole new trail: verify names each.
        let unlock = store == .postgres ? "ALTER TABLE audit_events DISABLE TRIGGER USER" : "DROP TRIGGER IF EXISTS audit_events_no_delete"
        _ = try await live.write { connection in
            try await connection.executeScript(unlock)
            return try await connection.execute("DELETE FROM audit_events WHERE session_id = \(new[0]) AND seq > 2")
        }
        let (truncated, truncatedOutput) = try await admin(["audit", "verify"])
        #expect(truncated != 0 && truncatedOutput.contains(new[0]), "the newest rows of a new trail were removed unnoticed: \(truncatedOutput)")
        _ = try await live.write { connection in
            try await connection.execute("DELETE FROM audit_events WHERE session_id = \(new[1])")
        }
        let (deleted, deletedOutput) = try await admin(["audit", "verify"])
        #expect(deleted != 0, "a whole new trail was deleted unnoticed: \(deletedOutput)")
    }

    @Test("an archive's target is checked before anything is recorded: a link at FILE.partial (even dangling) is never followed, a directory that does not exist is said; verify then passes and names the key it trusted")
    func archiveTargetCheckedFirst() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        defer { harness.close() }
        let database = harness.configuration.databasePath
        let env = ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": harness.configuration.auditSigningKeyPath]
        func admin(_ arguments: [String]) async throws -> (Int32, String) {
            try await runTool(Self.admin, arguments + ["--db", database], in: harness.directory.path, environment: env)
        }
        #expect(try await admin(["audit", "checkpoint"]).0 == 0)
        let before = ISO8601Timestamp.string(from: Date())
        // A dangling link where the partial file goes: the command stops, and the link's target is never made.
        let path = harness.directory.file("linked.sqlite")
        let target = harness.directory.file("elsewhere.sqlite")
        try FileManager.default.createSymbolicLink(atPath: path + ".partial", withDestinationPath: target)
        let (linked, linkedOutput) = try await admin(["audit", "archive", "--before", before, "--to", path])
        #expect(linked != 0 && linkedOutput.contains(".partial"), "\(linkedOutput)")
        #expect(!FileManager.default.fileExists(atPath: target), "the archive followed a link")
        // A directory that does not exist.
        let missing = harness.directory.file("no-such-directory/archive.sqlite")
        let (refused, refusedOutput) = try await admin(["audit", "archive", "--before", before, "--to", missing])
        #expect(refused != 0 && refusedOutput.contains("does not exist"), "\(refusedOutput)")
        let live = try await PhotosDatabase.open(harness.configuration)
        defer { Task { await live.close() } }
        #expect(try await Self.count(live, "SELECT count(*) FROM audit_archives") == 0, "an archive that wrote nothing was recorded")
        let (verified, verifyOutput) = try await admin(["audit", "verify"])
        #expect(verified == 0 && verifyOutput.contains("trusted key: "), "\(verifyOutput)")
        // Once the directory exists the same command works.
        try FileManager.default.createDirectory(atPath: harness.directory.file("no-such-directory"), withIntermediateDirectories: false)
        let (archived, archivedOutput) = try await admin(["audit", "archive", "--before", before, "--to", missing])
        #expect(archived == 0, "\(archivedOutput)")
    }

    static func count(_ database: any DatabaseStore, _ sql: SQL) async throws -> Int {
        try await database.read { try await $0.queryOne(sql)?.int(0) ?? -1 }
    }
}
