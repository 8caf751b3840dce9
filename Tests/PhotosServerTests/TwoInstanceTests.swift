import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import Testing

/// Two `photosd` processes on one PostgreSQL database, each request sent to one of them at
/// random, and one of the two killed (SIGKILL) at random moments under load while the other
/// keeps serving. Every guarantee must hold across them: nothing acknowledged lost or doubled,
/// `seq` contiguous, versions never going backwards, one purchase per user and photo, the
/// audit trail and its checkpoints (written by both) verifying.
///
/// CI runs a short form (PHOTOSD_TWO_INSTANCE_KILLS, default 2); `scripts/crash-test` runs 10.
@Suite("Two instances on one PostgreSQL database", .serialized, .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
struct TwoInstanceTests {
    static let kills = ProcessInfo.processInfo.environment["PHOTOSD_TWO_INSTANCE_KILLS"].flatMap(Int.init) ?? 2
    static let seed = ProcessInfo.processInfo.environment["PHOTOSD_CRASH_SEED"].flatMap(UInt64.init) ?? 20_261_122
    static let clients = 12

    @Test("requests to either instance at random, one instance killed under load: nothing acknowledged lost or doubled")
    func twoInstances() async throws {
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let url = database.url(password: "pw-never-shown")
        let admin = Daemon.binDirectory + "/photos-admin"
        for index in 0..<Self.clients {
            let (status, output) = try await runTool(admin, ["users", "add", "crash-\(index)", "--password-stdin", "--db", url], stdin: CrashTests.password, in: directory.path)
            #expect(status == 0, "\(output)")
        }
        // Both in one directory: they share the server secret and the audit signing key (the
        // first creates them; a retry's fingerprint and the checkpoints' signatures need one).
        let environment = [
            "PHOTOSD_DATABASE_PATH": url, "PHOTOSD_DATABASE_DURABILITY": "full",
            "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1", "PHOTOSD_DATABASE_MAX_CONNECTIONS": "8",
        ]
        var daemons = await [try Daemon(["--seed-demo"], in: directory.path, environment: environment)]
        await daemons.append(try Daemon([], in: directory.path, environment: environment))
        let target = CrashTests.Target()
        target.set(daemons.map(\.baseURL))
        let ledger = CrashTests.Ledger()
        let clientTasks = (0..<Self.clients).map { index in Task { await CrashTests.client(index, target: target, ledger: ledger) } }

        var random = SeededGenerator(state: Self.seed)
        var logs = ""
        for kill in 0..<Self.kills {
            try await Task.sleep(for: .milliseconds(Int.random(in: 200...800, using: &random)))
            let wanted = (kill + 1) * CrashTests.minimumAcknowledgedPerKill
            let waitLimit = ContinuousClock.now + .seconds(30)
            while ledger.acknowledged < wanted && ContinuousClock.now < waitLimit {
                try await Task.sleep(for: .milliseconds(20))
            }
            let victim = Int.random(in: 0..<2, using: &random)
            let survivor = 1 - victim
            logs += daemons[victim].log
            _ = daemons[victim].stop(signal: SIGKILL)
            target.set([daemons[survivor].baseURL])
            // The survivor keeps serving while the dead one is down.
            let before = ledger.acknowledged
            let serveLimit = ContinuousClock.now + .seconds(20)
            while ledger.acknowledged < before + 10 && ContinuousClock.now < serveLimit {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(ledger.acknowledged >= before + 10, "kill \(kill + 1): the other instance did not keep serving")
            let (verifyStatus, verifyOutput) = try await runTool(admin, ["audit", "verify", "--db", url], in: directory.path)
            #expect(verifyStatus == 0, "after kill \(kill + 1): \(verifyOutput)")
            daemons[victim] = try await Daemon([], in: directory.path, environment: environment)
            target.set(daemons.map(\.baseURL))
        }
        try await Task.sleep(for: .milliseconds(500))
        target.stop()
        for task in clientTasks { await task.value }

        let (events, sessions, tokens) = ledger.snapshot
        #expect(ledger.acknowledged > Self.kills * 20, "too little load to mean anything")
        #expect(ledger.versionsBackwards == 0, "a session's version went backwards")
        // Every session loads and accepts its next action, on either instance.
        for (index, id) in sessions.enumerated() {
            let daemon = daemons[index % 2]
            let (status, session) = try await daemon.request("GET", "/v1/sessions/\(id)")
            #expect(status == 200)
            let next = CrashTests.actions(session).first { $0 != "submit" } ?? "cancel"
            let body = next == "selectPhoto" || next == "buyPhoto" ? #"{"action":"\#(next)","photoId":1}"# : #"{"action":"\#(next)"}"#
            let (accepted, _) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: body)
            #expect(accepted == 200, "session \(id) refused \(next)")
        }
        for daemon in daemons {
            #expect(daemon.stop() == 0)
            logs += daemon.log
        }

        var configuration = PhotosConfiguration()
        configuration.databasePath = url
        let store = try await PhotosDatabase.open(configuration, migrate: false)
        let (stored, gaps, purchases, completed, checkpoints) = try await store.read { connection in
            var stored: [String: [Int: String]] = [:]
            for row in try await connection.query("SELECT session_id, seq, step FROM audit_trail") {
                stored[try row.string(0), default: [:]][try row.int(1)] = try row.string(2)
            }
            let gaps = try await connection.query("SELECT session_id FROM audit_trail GROUP BY session_id HAVING max(seq) != count(*) OR min(seq) != 1").count
            let purchases = try await connection.query("SELECT u.username || ':' || p.photo_id FROM purchases p JOIN users u ON u.id = p.user_id ORDER BY 1").map { try $0.string(0) }
            let completed = try await connection.query(
                "SELECT username || ':' || (detail::jsonb ->> 'photoId') FROM audit_trail WHERE step = 'purchase.completed' ORDER BY 1").map { try $0.string(0) }
            let checkpoints = try await connection.queryOne("SELECT count(*) FROM audit_checkpoints")?.int(0) ?? 0
            return (stored, gaps, purchases, completed, checkpoints)
        }
        await store.close()
        var missing = 0
        for (session, steps) in events {
            for (seq, step) in steps where stored[session]?[seq] != step { missing += 1 }
        }
        #expect(missing == 0, "acknowledged steps missing or different")
        #expect(gaps == 0, "seq not contiguous")
        #expect(purchases == completed, "a purchase without its step, or the other way round")
        #expect(Set(purchases).count == purchases.count)
        let (verifyStatus, verifyOutput) = try await runTool(admin, ["audit", "verify", "--db", url], in: directory.path)
        #expect(verifyStatus == 0, "\(verifyOutput)")
        #expect(checkpoints >= 2, "checkpoints were not written")
        #expect(verifyOutput.contains("\(checkpoints) checkpoints verified"), "\(verifyOutput)")
        // No password or token in the database (pg_dump), the server's log or photosd's logs.
        var bytes = Data(logs.utf8)
        await bytes.append(try database.dump())
        bytes.append(PostgresTestDatabase.serverLog() ?? Data())
        #expect(bytes.range(of: Data(CrashTests.password.utf8)) == nil)
        #expect(bytes.range(of: Data("pw-never-shown".utf8)) == nil)
        for token in tokens { #expect(bytes.range(of: Data(token.utf8)) == nil) }
        print("two instances: \(Self.kills) kills, \(ledger.acknowledged) acknowledged actions, \(ledger.failures) unacknowledged, \(sessions.count) sessions, \(purchases.count) purchases, \(checkpoints) checkpoints")
    }
}

/// docs/postgres.md's several-instances lines, run as written.
@Suite("docs/postgres.md: several instances", .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
struct ReadmeInstancesTests {
    @Test("docs/postgres.md's two-instance lines start two photosd on one database, each with its own console and metrics ports")
    func twoInstancesAsWritten() async throws {
        let block = try DocBlocks.block("instances-example", in: "docs/postgres.md")
        let lines = block.split(separator: "\n").map(String.init).filter { $0.hasPrefix("PHOTOSD_SERVER_PORT=") }
        #expect(lines.count == 2, "\(block)")
        let ports = lines.flatMap { line in line.matches(of: /_PORT=(\d+)/).map { Int($0.1) ?? 0 } }
        #expect(ports.count == 6, "each instance names its API, console and metrics ports: \(lines)")
        for port in ports {
            // A port taken by something else on this machine would fail the lines for a reason
            // that is not theirs: say so instead.
            try #require(!RawSocket.isListening(port: port), "port \(port) is in use on this machine; docs/postgres.md's lines need it free")
        }
        let database = try await PostgresTestDatabase.create()
        defer { Task { await database.drop() } }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // `.build/release/photosd` as docs/postgres.md builds it: here, the binary under test.
        try FileManager.default.createDirectory(atPath: directory.file(".build/release"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: directory.file(".build/release/photosd"), withDestinationPath: Daemon.binDirectory + "/photosd")
        let (api, console, metrics) = (ports.enumerated().filter { $0.offset % 3 == 0 }.map(\.element),
                                       ports.enumerated().filter { $0.offset % 3 == 1 }.map(\.element),
                                       ports.enumerated().filter { $0.offset % 3 == 2 }.map(\.element))
        let checks = (api.map { "http://127.0.0.1:\($0)/healthz" } + console.map { "http://127.0.0.1:\($0)/console/sign-in" }
            + metrics.map { "http://127.0.0.1:\($0)/metrics" } + api.map { "http://127.0.0.1:\($0)/metrics" })
        let script = """
            export PHOTOSD_DATABASE_PATH='\(database.url())'
            \(lines.joined(separator: "\n"))
            for url in \(checks.joined(separator: " ")); do
              for attempt in $(seq 150); do
                code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
                [ "$code" != 000 ] && break
                sleep 0.1
              done
              echo "$url $code"
            done
            kill $(jobs -p)
            wait
            """
        let result = try await runProcess("/usr/bin/timeout", ["60", "bash", "-c", script], in: directory.path)
        for url in checks.prefix(checks.count - api.count) {
            #expect(result.stdout.contains("\(url) 200"), "\(url): \(result.output.suffix(3_000))")
        }
        // The API's port does not serve /metrics.
        for url in checks.suffix(api.count) {
            #expect(result.stdout.contains("\(url) 404"), "\(url): \(result.output.suffix(3_000))")
        }
    }
}
