import Foundation
import PhotosTestSupport
import Testing

/// `photos-bench http` itself, in a short form, so that the benchmark behind the figures in
/// docs/benchmarks.md keeps working (its full runs are `scripts/bench` and `scripts/bench-stores`).
@Suite("photos-bench http, short form")
struct BenchSmokeTests {
    /// Runs photos-bench with `arguments` and returns its JSON figures.
    static func bench(_ arguments: [String]) async throws -> [[String: Any]] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let json = directory.file("figures.json")
        let result = try await runProcess(
            BuiltProducts.binDirectory + "/photos-bench",
            ["http", "--vus", "4", "--duration", "1", "--journeys", "mixed", "--directory", directory.path, "--json", json] + arguments,
            in: directory.path)
        #expect(result.status == 0, "\(result.output)")
        let data = try #require(FileManager.default.contents(atPath: json), "\(result.output)")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
    }

    @Test("on SQLite: actions and healthz served, no errors, the writer's CPU measured")
    func onSQLite() async throws {
        let figures = try #require(try await Self.bench([]).first)
        #expect((figures["actions"] as? Int ?? 0) > 0)
        #expect(figures["errors"] as? Int == 0)
        #expect((figures["healthzPerSecond"] as? Double ?? 0) > 0)
        #expect(figures["writerCPUMicrosPerAction"] != nil)
        #expect(figures["store"] as? String == "sqlite")
    }

    @Test("with every variation point split (--experiment): the journeys stay valid under every variant, no errors")
    func underExperiments() async throws {
        let figures = try #require(try await Self.bench([
            "--journeys", "stack", "--experiment", "buy.presentation=push:50,modal:50", "--experiment", "signIn.when=atBuy:50,atPurchase:50",
            "--experiment", "terms.required=no:50,yes:50",
        ]).first)
        #expect((figures["actions"] as? Int ?? 0) > 0)
        #expect(figures["errors"] as? Int == 0)
    }

    @Test("photos-bench receipts, short form: a long session's receipt served beside a bystander, bounded (the cut receipt smaller than the whole), no fetch failed")
    func receipts() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let json = directory.file("receipts.json")
        let result = try await runProcess(
            BuiltProducts.binDirectory + "/photos-bench",
            ["receipts", "--rows", "120", "--fetchers", "2", "--duration", "0.5", "--max-rows", "20,1000", "--durability", "normal", "--directory", directory.path, "--json", json],
            in: directory.path)
        #expect(result.status == 0 && !result.output.contains("failed"), "\(result.output)")
        let data = try #require(FileManager.default.contents(atPath: json))
        let figures = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(figures.count == 2)
        let bounded = try #require(figures.first), whole = try #require(figures.last)
        #expect((bounded["receiptBytes"] as? Int ?? 0) > 0 && (bounded["receiptBytes"] as? Int ?? 0) < (whole["receiptBytes"] as? Int ?? 0))
        for run in figures {
            #expect((run["receiptsPerSecond"] as? Double ?? 0) > 0 && (run["distinctReceiptsPerSecond"] as? Double ?? 0) > 0 && (run["aloneP95Ms"] as? Double ?? 0) > 0)
        }
    }

    @Test("scripts/bench-peer, short form: photosd and the raw peer walk the same journey with the same client, no errors on either, the ratio printed")
    func againstThePeer() async throws {
        let result = try await runProcess(
            "/bin/bash", [BuiltProducts.packageRoot + "/scripts/bench-peer", "1", BuiltProducts.binDirectory], in: BuiltProducts.packageRoot,
            environment: ["VUS": "4", "ROUNDS": "1", "LOG_LEVEL": "info"])
        #expect(result.status == 0, "\(result.output)")
        let row = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("    1  ") }, "\(result.output)")
        let cells = row.split(separator: " ").compactMap { Double($0) }
        #expect(cells.count >= 4 && cells[1] > 0 && cells[2] > 0 && cells[3] > 0, "\(row)")
        #expect(result.stdout.contains("median ratio photosd / peer: "), "\(result.output)")
    }

    @Test("the peer keeps what it answered: each action one committed transaction in WAL mode at synchronous FULL, an unknown session 404")
    func peerCommits() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let json = directory.file("figures.json")
        let log = directory.file("peer.log")
        let peer = try await runProcess(
            "/bin/bash", ["-c", "\(BuiltProducts.binDirectory)/photos-bench-peer --db \(directory.file("peer.db")) --port 0 > \(log) 2>&1 & echo $!"],
            in: directory.path)
        let pid = peer.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = kill(pid_t(pid) ?? 0, SIGKILL) }
        var port: String?
        for _ in 0..<100 where port == nil {
            try await Task.sleep(for: .milliseconds(100))
            port = (try? String(contentsOfFile: log, encoding: .utf8))?.firstMatch(of: /peer listening on port (\d+)/).map { String($0.1) }
        }
        let listening = try #require(port, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let run = try await runProcess(
            BuiltProducts.binDirectory + "/photos-bench",
            ["http", "--url", "http://127.0.0.1:\(listening)", "--vus", "4", "--duration", "1", "--journeys", "stack", "--json", json], in: directory.path)
        #expect(run.status == 0, "\(run.output)")
        let data = try #require(FileManager.default.contents(atPath: json), "\(run.output)")
        let figures = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        let actions = try #require(figures.first?["actions"] as? Int)
        #expect(actions > 0 && figures.first?["errors"] as? Int == 0)
        let missing = try await runProcess(
            "/bin/bash", ["-c", "curl -s -o /dev/null -w '%{http_code}' -X POST http://127.0.0.1:\(listening)/v1/sessions/nope/actions"], in: directory.path)
        #expect(missing.stdout == "404")
        _ = kill(pid_t(pid) ?? 0, SIGKILL)
        // Every answered action is a committed row (the warm-up's and the sign-ins' too), in WAL mode.
        let rows = try await runProcess(
            "/bin/bash", ["-c", "sqlite3 \(directory.file("peer.db")) 'PRAGMA journal_mode; SELECT count(*) FROM events; SELECT sum(version) FROM sessions'"], in: directory.path)
        let lines = rows.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "wal", "\(rows.output)")
        #expect((Int(lines.dropFirst().first ?? "") ?? 0) >= actions && lines.dropFirst().first == lines.last, "\(rows.output)")
    }

    @Test("scripts/bench-growth, short form (100 sessions, random ids): both databases prepared, grown, checkpointed under their own keys, every journey measured with no error, the ratios printed")
    func growth() async throws {
        let result = try await runProcess(
            "/bin/bash", [BuiltProducts.packageRoot + "/scripts/bench-growth", "100", "1000", "1", BuiltProducts.binDirectory], in: BuiltProducts.packageRoot,
            environment: ["VUS": "4", "ROUNDS": "1", "IDLE_SECONDS": "1", "SWEEP_EXPIRY": "2", "GROWN_IDS": "random"])
        #expect(result.status == 0, "\(result.output.suffix(3_000))")
        #expect(result.stderr.contains("grown: ") && result.stderr.contains(", 100 sessions, "), "\(result.stderr.suffix(2_000))")
        for journey in ["create", "stack", "sweep-create", "sweep-stack"] {
            let median = result.stdout.split(separator: "\n").first { $0.hasPrefix(journey + " ") && $0.contains(" median ratio grown / empty: ") }
            #expect(median != nil, "\(journey): \(result.stdout)")
            // Its row: journey, round, the two rates, …, the errors of both runs last.
            let row = result.stdout.split(separator: "\n").first { $0.hasPrefix(journey + " ") && !$0.contains("median") }
            #expect(row?.split(separator: " ").last == "0", "\(journey): \(row ?? "no row")")
        }
    }
}

extension BenchSmokeTests {
    /// The runs on the test PostgreSQL server, one at a time: each checks that no database of
    /// its kind is left on the server, which another's run would have meanwhile.
    @Suite("photos-bench on PostgreSQL, short form", .serialized)
    struct OnPostgres {
        @Test(
            "on PostgreSQL with two instances (the users spread over both): actions served, no errors, the server's CPU measured, the run's database dropped",
            .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
        func onPostgresTwoInstances() async throws {
            let server = try #require(PostgresTestDatabase.serverURL)
            let figures = try #require(try await BenchSmokeTests.bench(["--db", server, "--instances", "2"]).first)
            #expect((figures["actions"] as? Int ?? 0) > 0)
            #expect(figures["errors"] as? Int == 0)
            #expect(figures["instances"] as? Int == 2)
            #expect(figures["store"] as? String == "postgres")
            #expect((figures["databaseCPUMicrosPerAction"] as? Double ?? 0) > 0)
            let leftover = try await PostgresTestDatabase.serverDatabases().filter { $0.hasPrefix("photos_bench_") }
            #expect(leftover.isEmpty, "photos-bench left \(leftover)")
        }

        @Test(
            "scripts/bench-peer on both stores, short form: photosd and the peer on SQLite and on PostgreSQL (postgres-nio), no errors, each one's CPU per request and their PostgreSQL/SQLite figures printed, the peer's database dropped",
            .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
        func againstThePeerOnBothStores() async throws {
            let server = try #require(PostgresTestDatabase.serverURL)
            let result = try await runProcess(
                "/bin/bash", [BuiltProducts.packageRoot + "/scripts/bench-peer", "1", BuiltProducts.binDirectory], in: BuiltProducts.packageRoot,
                environment: ["VUS": "4", "ROUNDS": "1", "STORES": "sqlite postgres", "POSTGRES_URL": server])
            #expect(result.status == 0, "\(result.output)")
            let rows = result.stdout.split(separator: "\n").filter { $0.hasPrefix("    1  ") }
            #expect(rows.count == 2, "\(result.output)")
            for row in rows {
                let cells = row.split(separator: " ").compactMap { Double($0) }
                // actions/s, requests/s, ratio, …, photosd's CPU, writer, the peer's CPU: all measured.
                #expect(cells.count == 9 && cells[1] > 0 && cells[2] > 0 && cells[6] > 0 && cells[8] > 0, "\(row)")
            }
            let figures = try #require(result.stdout.firstMatch(of: /photosd (\d+) \/ (\d+) µs = [\d.]+ x \(\+-?\d+ µs\); peer (\d+) \/ (\d+) µs/), "\(result.output)")
            #expect([figures.1, figures.2, figures.3, figures.4].allSatisfy { (Int($0) ?? 0) > 0 })
            let leftover = try await PostgresTestDatabase.serverDatabases().filter { $0.hasPrefix("peer_") || $0.hasPrefix("photos_bench_") }
            #expect(leftover.isEmpty, "left \(leftover)")
        }
    }
}
