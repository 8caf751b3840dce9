import DatabaseAccess
import Foundation
import Hummingbird
import HummingbirdTesting
import PhotosTestSupport
import SQLiteStore
import Testing

@Suite("Concurrency", .serialized)
struct ConcurrencyTests {
    @Test("50 concurrent buys of one photo by one user across 50 sessions: exactly one purchase", arguments: TestStore.all)
    func concurrentBuysAcrossSessions(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            var sessions: [String] = []
            for _ in 0..<50 {
                let id = try await client.newSession()
                _ = try await client.act(id, #"{"action":"signIn"}"#)
                _ = try await client.act(id, #"{"action":"submit","username":"alice","password":"correct horse"}"#)
                _ = try await client.act(id, #"{"action":"selectPhoto","photoId":4}"#)
                let atBuy = try await client.act(id, #"{"action":"buy"}"#)
                #expect(topScreen(atBuy.json) == "buy")
                sessions.append(id)
            }
            let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                for id in sessions {
                    group.addTask { try await client.act(id, #"{"action":"buy"}"#).json["outcome"] as? String ?? "error" }
                }
                var outcomes: [String] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            #expect(outcomes.filter { $0 == "purchased" }.count == 1)
            #expect(outcomes.filter { $0 == "alreadyOwned" }.count == 49)
        }
        #expect(try await h.query("SELECT count(*) FROM purchases").first?.int(0) == 1)
        #expect(try await h.query("SELECT count(*) FROM audit_trail WHERE step = 'purchase.completed'").first?.int(0) == 1)
    }

    @Test("photos-admin purchases, imports and signs sessions in while photosd serves under load: nobody sees 'database is locked'")
    func adminWhileServing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let admin = Daemon.binDirectory + "/photos-admin"
        try await migrateDefaultDatabase(in: directory.path)
        for index in 0..<CrashTests.clients {
            _ = try await runTool(admin, ["users", "add", "crash-\(index)", "--password-stdin", "--db", "data/photos.db"], stdin: CrashTests.password, in: directory.path)
        }
        _ = try await runTool(admin, ["users", "add", "operator-user", "--password-stdin", "--db", "data/photos.db"], stdin: "operator password", in: directory.path)
        let daemon = try await Daemon(["--seed-demo"], in: directory.path, environment: ["PHOTOSD_DATABASE_DURABILITY": "full"])
        // A session waiting on sign-in inside a purchase flow, for the operator to complete.
        let (_, waiting) = try await daemon.request("POST", "/v1/sessions")
        let waitingID = try #require(waiting["id"] as? String)
        _ = try await daemon.request("POST", "/v1/sessions/\(waitingID)/actions", body: #"{"action":"buyPhoto","photoId":3}"#)

        let target = CrashTests.Target()
        target.set(daemon.baseURL)
        let ledger = CrashTests.Ledger()
        let load = (0..<CrashTests.clients).map { index in Task { await CrashTests.client(index, target: target, ledger: ledger) } }
        try await Task.sleep(for: .milliseconds(300))

        var adminOutputs: [String] = []
        let csv = directory.file("more.csv")
        try ("title,url,price\n" + (1...5_000).map { "Extra \($0),,1.50" }.joined(separator: "\n") + "\n").write(toFile: csv, atomically: true, encoding: .utf8)
        let commands: [[String]] = [
            ["purchase", "operator-user", "1"], ["purchase", "operator-user", "2"], ["photos", "import", csv],
            ["sign-in", "operator-user", "--session", waitingID], ["purchase", "--session", waitingID],
            ["photos", "add", "--title", "Late addition", "--price", "4.00"], ["purchase", "operator-user", "5"],
        ]
        for command in commands {
            let (status, output) = try await runTool(admin, command + ["--db", "data/photos.db"], in: directory.path)
            #expect(status == 0, "\(command): \(output)")
            adminOutputs.append(output)
        }
        try await Task.sleep(for: .milliseconds(300))
        target.stop()
        for task in load { await task.value }
        #expect(daemon.stop() == 0)

        #expect(ledger.failures == 0, "clients saw failed requests")
        #expect(ledger.acknowledged > 50)
        for output in adminOutputs + [daemon.log] { #expect(!output.lowercased().contains("locked"), "\(output.prefix(300))") }
        let connection = try Connection(path: directory.file("data/photos.db"), mode: .readOnly)
        defer { connection.close() }
        await #expect(try connection.queryOne("SELECT count(*) FROM photos")?.int(0) == 5 + 5_000 + 1)
        await #expect(try connection.queryOne("SELECT count(*) FROM purchases p JOIN users u ON u.id = p.user_id WHERE u.username = 'operator-user'")?.int(0) == 4)
        let steps = try connection.query("SELECT step, actor FROM audit_trail WHERE session_id = \(waitingID) ORDER BY seq").map { "\(try $0.string(0)) \(try $0.string(1))" }
        #expect(steps.contains("purchase.completed operator:tester"))
    }
}
