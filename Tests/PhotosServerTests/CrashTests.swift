import DatabaseAccess
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import PhotosTestSupport
import SQLiteStore
import Testing

/// Crash safety: photosd under load from many sessions, killed with SIGKILL at random moments
/// and restarted each time. Nothing acknowledged may be lost, doubled or altered.
///
/// CI runs a short form (PHOTOSD_CRASH_KILLS, default 3); `scripts/crash-test` runs the full
/// loop (25 kills). PHOTOSD_CRASH_SEED makes a run repeatable.
@Suite("Crash safety", .serialized)
struct CrashTests {
    static let kills = ProcessInfo.processInfo.environment["PHOTOSD_CRASH_KILLS"].flatMap(Int.init) ?? 3
    static let seed = ProcessInfo.processInfo.environment["PHOTOSD_CRASH_SEED"].flatMap(UInt64.init) ?? 20_261_122
    static let clients = 12
    /// Acknowledged actions each period between kills must see before its kill (on average:
    /// the count is cumulative).
    static let minimumAcknowledgedPerKill = 12
    static let password = "crash-test-password"

    /// What the clients saw acknowledged.
    final class Ledger: @unchecked Sendable {
        // @unchecked Sendable: every field is guarded by `lock`.
        private let lock = NSLock()
        private var events: [String: [Int: String]] = [:]  // session → seq → step
        private var sessionIDs: Set<String> = []
        private var acknowledgedCount = 0
        private var failureCount = 0
        var acknowledged: Int { lock.lock(); defer { lock.unlock() }; return acknowledgedCount }
        var failures: Int { lock.lock(); defer { lock.unlock() }; return failureCount }
        private var tokens: [String] = []

        func record(session: String, events rows: [[String: Any]], token: String?) {
            lock.lock()
            defer { lock.unlock() }
            acknowledgedCount += 1
            sessionIDs.insert(session)
            for row in rows {
                if let seq = row["seq"] as? Int, let step = row["step"] as? String { events[session, default: [:]][seq] = step }
            }
            if let token { tokens.append(token) }
        }

        func created(_ session: String) {
            lock.lock()
            sessionIDs.insert(session)
            lock.unlock()
        }

        func failed() {
            lock.lock()
            failureCount += 1
            lock.unlock()
        }

        /// Versions a client saw go backwards (a session answered older than it was).
        private(set) var versionsBackwards = 0

        /// Records one answer's session version against the one the client saw before.
        func observe(_ next: [String: Any], after previous: [String: Any]) {
            guard let new = next["version"] as? Int, let old = previous["version"] as? Int, new < old else { return }
            lock.lock()
            versionsBackwards += 1
            lock.unlock()
        }

        var snapshot: (events: [String: [Int: String]], sessions: Set<String>, tokens: [String]) {
            lock.lock()
            defer { lock.unlock() }
            return (events, sessionIDs, tokens)
        }
    }

    /// The current daemons' addresses (they change at every restart: port 0); each request goes
    /// to one of them at random.
    final class Target: @unchecked Sendable {
        // @unchecked Sendable: guarded by `lock`.
        private let lock = NSLock()
        private var bases: [String] = []
        private var stopped = false
        var url: String { lock.lock(); defer { lock.unlock() }; return bases.randomElement() ?? "" }
        var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }
        func set(_ url: String) { set([url]) }
        func set(_ urls: [String]) { lock.lock(); bases = urls; lock.unlock() }
        func stop() { lock.lock(); stopped = true; lock.unlock() }
    }

    static func send(_ target: Target, _ method: String, _ path: String, body: String? = nil) async -> (Int, [String: Any])? {
        guard let url = URL(string: target.url + path) else { return nil }
        var request = URLRequest(url: url, timeoutInterval: 5)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let authorization = SessionSecretBook.authorization(for: path) { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        guard let (data, response) = try? await URLSession.shared.data(for: request) else { return nil }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        if status == 201 { SessionSecretBook.learn(json) }
        return (status, json)
    }

    static func actions(_ session: [String: Any]) -> [String] {
        ((session["top"] as? [String: Any])?["actions"] as? [String]) ?? []
    }

    /// One client: its own session and user; random valid actions; after any failure it
    /// re-reads its session (whatever happened to the lost request) and goes on.
    static func client(_ index: Int, target: Target, ledger: Ledger) async {
        var random = SeededGenerator(state: seed &+ UInt64(index) &* 7_919)
        var sessionID: String?
        var session: [String: Any] = [:]
        while !target.isStopped {
            guard let id = sessionID else {
                if let (status, created) = await send(target, "POST", "/v1/sessions"), status == 201, let id = created["id"] as? String {
                    sessionID = id
                    session = created
                    ledger.created(id)
                } else {
                    try? await Task.sleep(for: .milliseconds(50))
                }
                continue
            }
            let allowed = actions(session)
            guard !allowed.isEmpty else { return }
            let action = allowed[Int.random(in: 0..<allowed.count, using: &random)]
            var body = #"{"action":"\#(action)""#
            switch action {
            case "selectPhoto", "buyPhoto": body += #","photoId":\#(Int.random(in: 1...5, using: &random))"#
            case "submit": body += #","username":"crash-\#(index)","password":"\#(password)""#
            default: break
            }
            body += "}"
            if let (status, result) = await send(target, "POST", "/v1/sessions/\(id)/actions", body: body), status == 200,
               let next = result["session"] as? [String: Any] {
                ledger.record(session: id, events: result["events"] as? [[String: Any]] ?? [], token: result["token"] as? String)
                ledger.observe(next, after: session)
                session = next
            } else {
                ledger.failed()
                // Unknown outcome: learn the session's state again once the server answers.
                while !target.isStopped {
                    if let (status, fresh) = await send(target, "GET", "/v1/sessions/\(id)"), status == 200 {
                        ledger.observe(fresh, after: session)
                        session = fresh
                        break
                    }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
        }
    }

    @Test("SIGKILL under load, restart, repeat: nothing acknowledged is lost, doubled or altered")
    func killAndRestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let admin = Daemon.binDirectory + "/photos-admin"
        try await migrateDefaultDatabase(in: directory.path)
        for index in 0..<Self.clients {
            let (status, output) = try await runTool(admin, ["users", "add", "crash-\(index)", "--password-stdin", "--db", "data/photos.db"], stdin: Self.password, in: directory.path)
            #expect(status == 0, "\(output)")
        }
        var logs = ""
        // Checkpoints every second, so that kills land before, during and after them.
        let environment = ["PHOTOSD_DATABASE_DURABILITY": "full", "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1"]
        var daemon = try await Daemon(["--seed-demo"], in: directory.path, environment: environment)
        let target = Target()
        target.set(daemon.baseURL)
        let ledger = Ledger()
        let clientTasks = (0..<Self.clients).map { index in Task { await Self.client(index, target: target, ledger: ledger) } }

        var random = SeededGenerator(state: Self.seed)
        var backupChecked = false
        for kill in 0..<Self.kills {
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...700, using: &random)))
            // On a busy machine (CI building beside it) the clients may not have got going yet:
            // kill only once each period has seen some acknowledged load, so that the checks
            // below always have something to check. The kill moment stays random.
            let wanted = (kill + 1) * Self.minimumAcknowledgedPerKill
            let waitLimit = ContinuousClock.now + .seconds(30)
            while ledger.acknowledged < wanted && ContinuousClock.now < waitLimit {
                try await Task.sleep(for: .milliseconds(20))
            }
            if !backupChecked && kill == Self.kills / 2 {
                // A backup taken under this load must be a sound database.
                let (status, output) = try await runTool(admin, ["backup", "backup.db", "--db", "data/photos.db"], in: directory.path)
                #expect(status == 0, "\(output)")
                backupChecked = true
            }
            logs += daemon.log
            _ = daemon.stop(signal: SIGKILL)
            // After each kill the trail and its checkpoints verify (numbers contiguous, each
            // signed, each covering rows that are there).
            let (verifyStatus, verifyOutput) = try await runTool(admin, ["audit", "verify", "--db", "data/photos.db"], in: directory.path)
            #expect(verifyStatus == 0, "after kill \(kill + 1): \(verifyOutput)")
            daemon = try await Daemon([], in: directory.path, environment: environment)
            target.set(daemon.baseURL)
        }
        try await Task.sleep(for: .milliseconds(500))
        target.stop()
        for task in clientTasks { await task.value }

        // Every session loads and accepts its next action.
        let (events, sessions, tokens) = ledger.snapshot
        #expect(ledger.acknowledged > Self.kills * 10, "too little load to mean anything")
        for id in sessions {
            let (status, session) = try await daemon.request("GET", "/v1/sessions/\(id)")
            #expect(status == 200)
            let next = Self.actions(session).first { $0 != "submit" } ?? "cancel"
            let body = next == "selectPhoto" || next == "buyPhoto" ? #"{"action":"\#(next)","photoId":1}"# : #"{"action":"\#(next)"}"#
            let (accepted, _) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: body)
            #expect(accepted == 200, "session \(id) refused \(next)")
        }
        #expect(daemon.stop() == 0)
        logs += daemon.log

        let connection = try Connection(path: directory.file("data/photos.db"), mode: .readOnly)
        defer { connection.close() }
        // Every acknowledged step is in the audit trail, as acknowledged.
        var missing = 0
        for (session, steps) in events {
            let stored = Dictionary(uniqueKeysWithValues: try connection.query(
                "SELECT seq, step FROM audit_trail WHERE session_id = \(session)").map { (try $0.int(0), try $0.string(1)) })
            for (seq, step) in steps where stored[seq] != step { missing += 1 }
        }
        #expect(missing == 0, "acknowledged steps missing or different")
        // seq contiguous in every session.
        let gaps = try connection.query("SELECT session_id FROM audit_trail GROUP BY session_id HAVING max(seq) != count(*) OR min(seq) != 1")
        #expect(gaps.isEmpty)
        await #expect(try connection.queryOne("PRAGMA integrity_check")?.string(0) == "ok")
        // Purchases and purchase.completed steps, one to one.
        let purchases = try connection.query("SELECT u.username || ':' || p.photo_id FROM purchases p JOIN users u ON u.id = p.user_id ORDER BY 1").map { try $0.string(0) }
        let completed = try connection.query("SELECT username || ':' || json_extract(detail, '$.photoId') FROM audit_trail WHERE step = 'purchase.completed' ORDER BY 1").map { try $0.string(0) }
        #expect(purchases == completed)
        let (verifyStatus, verifyOutput) = try await runTool(admin, ["audit", "verify", "--db", "data/photos.db"], in: directory.path)
        #expect(verifyStatus == 0, "\(verifyOutput)")
        let checkpoints = try await connection.queryOne("SELECT count(*) FROM audit_checkpoints")?.int(0) ?? 0
        #expect(checkpoints >= 1, "no checkpoint was written during the run")
        #expect(verifyOutput.contains("\(checkpoints) checkpoints verified"), "\(verifyOutput)")
        if backupChecked {
            // The backup is checked with the key as it is backed up (docs/deploy.md: the key
            // files, not the signed tree head beside the live key, which knows of checkpoints
            // after the backup and names the backup as behind them: what a restore would meet).
            try? FileManager.default.removeItem(atPath: directory.file("backup-key"))
            try FileManager.default.copyItem(atPath: directory.file("data/audit-signing.key"), toPath: directory.file("backup-key"))
            let (checkStatus, checkOutput) = try await runTool(
                admin, ["check", "--db", "backup.db"], in: directory.path,
                environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": directory.file("backup-key")])
            #expect(checkStatus == 0, "\(checkOutput)")
            // With the live key's signed head: intact, and behind it unless no checkpoint came since.
            let (liveStatus, liveOutput) = try await runTool(
                admin, ["check", "--db", "backup.db"], in: directory.path,
                environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": directory.file("data/audit-signing.key")])
            #expect(liveOutput.contains("audit: intact"), "\(liveOutput)")
            #expect(liveStatus == 0 || (liveStatus == 3 && liveOutput.contains("fewer than")), "\(liveOutput)")
            let (listStatus, _) = try await runTool(admin, ["sessions", "list", "--db", "backup.db"], in: directory.path)
            #expect(listStatus == 0)
        }
        // No password or token in the database files or the logs of the whole run.
        var bytes = Data(logs.utf8)
        for suffix in ["", "-wal"] { bytes.append(FileManager.default.contents(atPath: directory.file("data/photos.db") + suffix) ?? Data()) }
        #expect(bytes.range(of: Data(Self.password.utf8)) == nil)
        for token in tokens { #expect(bytes.range(of: Data(token.utf8)) == nil) }
        print("crash test: \(Self.kills) kills, \(ledger.acknowledged) acknowledged actions, \(ledger.failures) unacknowledged, \(sessions.count) sessions, \(purchases.count) purchases")
    }
}
