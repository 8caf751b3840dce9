import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import PhotosdProcess
import Testing

/// `photos-admin audit archive` against a database a real photosd keeps serving, on both stores:
/// ended sessions' trails (and the reserved trails' older rows) leave for a signed archive file,
/// `audit verify` still passes and `verify --archive` checks both as one history.
@Suite("audit archive with photosd running", .serialized)
struct ArchiveEndToEndTests {
    static let admin = Daemon.binDirectory + "/photos-admin"

    @Test("archive while photosd serves: ended trails move whole, nothing in both, verify passes alone and with the archive; tampering, a missing archive and a second archive", arguments: TestStore.all)
    func archiveWhileServing(store: TestStore) async throws {
        let harness = try await ServerHarness.make(store)
        defer { harness.close() }
        let database = harness.configuration.databasePath
        let env = [
            "PHOTOSD_AUDIT_SIGNING_KEY_PATH": harness.configuration.auditSigningKeyPath, "PHOTOSD_AUTH_BCRYPT_COST": "4",
            // Long enough that a session of the load below is not ended between its creation
            // and its action on a loaded machine (its creation may wait seconds for the
            // archiver's write lock, and its idle time counts from the decision); short enough
            // to wait for.
            "PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "6",
        ]
        func admin(_ arguments: [String]) async throws -> (Int32, String) {
            try await runTool(Self.admin, arguments + ["--db", database], in: harness.directory.path, environment: env)
        }
        let daemon = try await Daemon(["--db", database, "--seed-demo"], in: harness.directory.path, environment: env)
        defer { _ = daemon.stop() }

        // Sessions that move about (one signs in), then end: idle past the expiry, each is
        // ended at its next request.
        var ended: [String] = []
        for index in 0..<12 {
            let (_, created) = try await daemon.request("POST", "/v1/sessions")
            let id = try #require(created["id"] as? String)
            _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":\#(index % 3 + 1)}"#)
            if index == 0 {
                _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"buy"}"#)
                _ = try await daemon.request(
                    "POST", "/v1/sessions/\(id)/actions", body: #"{"action":"submit","username":"alice","password":"\#(ServerHarness.password)"}"#)
            }
            ended.append(id)
        }
        try await Task.sleep(for: .seconds(6.5))
        for id in ended {
            let (status, _) = try await daemon.request("GET", "/v1/sessions/\(id)")
            #expect(status == 410)
        }
        let (checkpointed, checkpointOutput) = try await admin(["audit", "checkpoint"])
        #expect(checkpointed == 0, "\(checkpointOutput)")
        let live = try await PhotosDatabase.open(harness.configuration)
        defer { Task { await live.close() } }
        let rowsBefore = try await Self.count(live, "SELECT count(*) FROM audit_events")
        let newestBefore = try await Self.count(live, "SELECT max(id) FROM audit_events")

        // Archive while a client keeps creating sessions and acting on them.
        let before = ISO8601Timestamp.string(from: Date())
        let load = Task {
            var refusals: [String] = []
            for _ in 0..<40 {
                let (created, body) = try await daemon.request("POST", "/v1/sessions")
                if created != 201 { refusals.append("create: \(created) \(body)") }
                guard let id = body["id"] as? String else { continue }
                let (acted, answer) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":2}"#)
                if acted != 200 { refusals.append("act on \(id): \(acted) \(answer)") }
            }
            return refusals
        }
        let path = harness.directory.file("archive-1.sqlite")
        let (archived, output) = try await admin(["audit", "archive", "--before", before, "--to", path, "--sessions-per-step", "5", "--format", "json"])
        #expect(archived == 0, "\(output)")
        let refusals = try await load.value
        #expect(refusals.isEmpty, "photosd refused requests during the archive: \(refusals)")
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        let report = try #require(json?["archives"] as? [[String: Any]])
        let archivedRows = try #require(report.first?["rows"] as? Int)
        #expect(report.count == 1 && report.first?["sessions"] as? Int == ended.count, "\(output)")
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))

        // Nothing in both, nothing lost: the ended sessions' trails are in the archive only, the
        // rows that left are the rows it holds.
        let file = try AuditArchiveFiles.openForReading(path)
        #expect(try await file.queryOne("SELECT count(*) FROM audit_trail")?.int(0) == archivedRows)
        let archivedTrails = Set(try await file.query("SELECT DISTINCT session_id FROM audit_events").map { try $0.string(0) })
        #expect(Set(ended).isSubset(of: archivedTrails) && archivedTrails.contains("operator"), "\(archivedTrails)")
        for id in ended {
            #expect(try await Self.count(live, "SELECT count(*) FROM audit_events WHERE session_id = \(id)") == 0)
            let (status, _) = try await daemon.request("GET", "/v1/sessions/\(id)")
            #expect(status == 404, "an archived session is gone from the live database")
        }
        let rowsAfter = try await Self.count(live, "SELECT count(*) FROM audit_events WHERE id <= \(newestBefore)")
        if rowsAfter + archivedRows != rowsBefore {
            // Seen twice under a loaded full run (164 against 82: every row counted twice), not
            // understood yet. Say what a fresh handle and the archive see, for whoever looks next.
            let fresh = try await PhotosDatabase.open(harness.configuration)
            let freshRows = try await Self.count(fresh, "SELECT count(*) FROM audit_events WHERE id <= \(newestBefore)")
            await fresh.close()
            let distinct = try await file.queryOne("SELECT count(DISTINCT session_id || ':' || seq) FROM audit_events")?.int(0) ?? -1
            Issue.record("rows before \(rowsBefore), live \(rowsAfter) (a fresh handle: \(freshRows)) + archived \(archivedRows) (distinct trail:seq in the archive: \(distinct))")
        }
        // Who signed in is a user id in the archive, never a name.
        #expect(try await file.queryOne("SELECT count(*) FROM audit_trail WHERE username IS NOT NULL")?.int(0) == 0)

        let (verified, verifyOutput) = try await admin(["audit", "verify"])
        #expect(verified == 0 && verifyOutput.contains("archived: \(archivedRows) rows in 1 archive"), "\(verifyOutput)")
        let (joined, joinedOutput) = try await admin(["audit", "verify", "--archive", path])
        #expect(joined == 0 && joinedOutput.contains("1 archive verified with the live rows as one history (\(archivedRows) rows)"), "\(joinedOutput)")

        // A row altered in the archive, a row deleted from it: named.
        let edits: [(String, SQL)] = [
            ("altered", "UPDATE audit_events SET detail = '{}' WHERE step = 'coordinator.start' AND id = (SELECT min(id) FROM audit_events WHERE step = 'coordinator.start')"),
            ("deleted", "DELETE FROM audit_events WHERE id = (SELECT max(id) FROM audit_events WHERE session_id = \(ended[3]))"),
        ]
        for (name, sql) in edits {
            let copy = harness.directory.file("\(name).sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            let writable = try AuditArchiveFiles.openForWriting(copy, create: false)
            #expect(try await writable.execute(sql) == 1)
            let (failed, failure) = try await admin(["audit", "verify", "--archive", copy])
            #expect(failed != 0 && failure.contains("FAILED") && failure.contains("archive 1"), "\(name): \(failure)")
        }

        // A second archive: the operator trail goes on from the first, and verify needs both.
        _ = try await admin(["users", "add", "carol", "--password-stdin"])
        try await Task.sleep(for: .milliseconds(20))
        let second = harness.directory.file("archive-2.sqlite")
        let (again, againOutput) = try await admin(["audit", "archive", "--before", ISO8601Timestamp.string(from: Date()), "--to", second])
        #expect(again == 0 && againOutput.contains("archive 2:"), "\(againOutput)")
        let (missing, missingOutput) = try await admin(["audit", "verify", "--archive", second])
        #expect(missing != 0 && missingOutput.contains("archive 1") && missingOutput.contains("is missing"), "\(missingOutput)")
        let (both, bothOutput) = try await admin(["audit", "verify", "--archive", second, "--archive", path])
        #expect(both == 0 && bothOutput.contains("2 archives verified"), "\(bothOutput)")
        // Deleting the live record of what moved is refused by the database itself.
        await #expect(throws: (any Error).self) {
            try await live.write { try await $0.execute("DELETE FROM audit_archived_trails") }
        }
    }

    @Test("an archive killed midway: at every kill nothing is lost; the next run finishes it; then nothing is in both and the file shrank")
    func killedMidway() async throws {
        let harness = try await ServerHarness.make(.sqlite)
        defer { harness.close() }
        let database = harness.configuration.databasePath
        let env = [
            "PHOTOSD_AUDIT_SIGNING_KEY_PATH": harness.configuration.auditSigningKeyPath, "PHOTOSD_AUTH_BCRYPT_COST": "4",
            "PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "1",
        ]
        do {
            let daemon = try await Daemon(["--db", database, "--seed-demo"], in: harness.directory.path, environment: env)
            defer { _ = daemon.stop() }
            for index in 0..<80 {
                let (_, created) = try await daemon.request("POST", "/v1/sessions")
                let id = try #require(created["id"] as? String)
                for photo in 1...(index % 4 + 1) {
                    _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":\#(photo)}"#)
                    _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"back"}"#)
                }
            }
            // The sweep (every tenth of the expiry) ends them all.
            try await Task.sleep(for: .seconds(2))
        }
        let live = try await PhotosDatabase.open(harness.configuration)
        defer { Task { await live.close() } }
        #expect(try await Self.count(live, "SELECT count(*) FROM sessions WHERE ended_at IS NULL") == 0)
        // photosd gave the sweep's lease up as it stopped: the next start sweeps at once.
        #expect(try await live.read { try await $0.queryOne("SELECT until FROM maintenance_leases WHERE name = 'session-sweep'")?.string(0) }
            == "1970-01-01T00:00:00.000Z")
        let total = try await Self.count(live, "SELECT count(*) FROM audit_events")
        let sizeBefore = try Self.fileSize(database)

        let path = harness.directory.file("archive.sqlite")
        let arguments = ["audit", "archive", "--before", ISO8601Timestamp.string(from: Date()), "--to", path, "--sessions-per-step", "2", "--db", database]
        var kills = 0
        var killedWhileMoving = 0
        var finished = false
        for attempt in 0..<8 where !finished {
            // Killed a step or two into moving (however slow the machine is today): when the
            // live database lists more segments than before it started.
            let segmentsBefore = try await Self.count(live, "SELECT count(*) FROM audit_archived_trails")
            let process = try spawnProcess(Self.admin, arguments, in: harness.directory.path, environment: env)
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning, Date() < deadline {
                if try await Self.count(live, "SELECT count(*) FROM audit_archived_trails") > segmentsBefore + (attempt % 3) * 2 { break }
                try await Task.sleep(for: .milliseconds(2))
            }
            if process.isRunning {
                process.signal(SIGKILL)
                kills += 1
            }
            let status = try await offThePool { process.waitForExit() }
            // (`waitForExit` gives a signal's number for a killed child: SIGKILL is 9, never 0.)
            finished = status == 0
            // Whatever the kill interrupted: every row is in the live database, or in a segment
            // the live database lists and the partial file holds.
            let moved = try await Self.count(live, "SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM audit_archived_trails")
            let remaining = try await Self.count(live, "SELECT count(*) FROM audit_events")
            #expect(moved + remaining == total, "after kill \(kills): \(moved) moved + \(remaining) live != \(total)")
            if !finished, moved > 0, remaining > 0 { killedWhileMoving += 1 }
            let filePath = FileManager.default.fileExists(atPath: path) ? path : path + ".partial"
            if FileManager.default.fileExists(atPath: filePath) {
                let file = try AuditArchiveFiles.openForReading(filePath)
                let inFile = try await file.queryOne("SELECT count(*) FROM audit_events")?.int(0) ?? 0
                #expect(inFile >= moved, "after kill \(kills): the file holds \(inFile) rows of the \(moved) that left")
            }
        }
        #expect(killedWhileMoving > 0, "no run was killed while rows were moving (\(kills) kills): the test proved nothing")
        if !finished {
            // The same command again finishes what the kill interrupted.
            let (status, output) = try await runTool(Self.admin, arguments, in: harness.directory.path, environment: env)
            #expect(status == 0 && output.contains("finished interrupted archive 1"), "\(output)")
        }
        #expect(try await Self.count(live, "SELECT count(*) FROM audit_archives WHERE finished_at IS NULL") == 0)
        #expect(try await Self.count(live, "SELECT count(*) FROM audit_events") == 0)
        let file = try AuditArchiveFiles.openForReading(path)
        #expect(try await file.queryOne("SELECT count(*) FROM audit_events")?.int(0) == total, "nothing lost, nothing twice")
        #expect(try await file.queryOne("SELECT count(*) FROM sessions")?.int(0) == 80)
        let (verified, output) = try await runTool(
            Self.admin, ["audit", "verify", "--archive", path, "--db", database], in: harness.directory.path, environment: env)
        #expect(verified == 0 && output.contains("(\(total) rows)"), "\(output)")
        let sizeAfter = try Self.fileSize(database)
        #expect(sizeAfter < sizeBefore, "the database file did not shrink: \(sizeBefore) → \(sizeAfter) bytes")

        // Another database's archive is named as such.
        let other = try await ServerHarness.make(.sqlite)
        defer { other.close() }
        let otherArchive = other.directory.file("other.sqlite")
        let otherEnv = ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": other.configuration.auditSigningKeyPath]
        let (made, madeOutput) = try await runTool(
            Self.admin, ["audit", "archive", "--before", "2026-01-01", "--to", otherArchive, "--db", other.configuration.databasePath],
            in: other.directory.path, environment: otherEnv)
        #expect(made == 0, "\(madeOutput)")
        let (foreign, foreignOutput) = try await runTool(
            Self.admin, ["audit", "verify", "--archive", otherArchive, "--db", database], in: harness.directory.path, environment: env)
        #expect(foreign != 0 && foreignOutput.contains("not this database's archive 1"), "\(foreignOutput)")
    }

    static func count(_ database: any DatabaseStore, _ sql: SQL) async throws -> Int {
        try await database.read { try await $0.queryOne(sql)?.int(0) ?? -1 }
    }

    static func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
