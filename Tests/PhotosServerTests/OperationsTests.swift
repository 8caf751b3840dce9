import DatabaseAccess
import Foundation
import PhotosModel
@testable import PhotosServer
import PhotosTestSupport
import PhotosdProcess
import SQLiteStore
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an operator's monitoring sees of a real photosd: `/readyz` beside `/healthz`, the
/// figures `/metrics` adds, and a SIGHUP that does not end it. (Storage gone on PostgreSQL:
/// `PostgresOutageTests`.)
@Suite("Operating photosd: readiness, metrics, signals", .serialized)
struct OperationsTests {
    /// `GET url` as text, with its status.
    static func get(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// The value of the sample named `name` (with its labels, if any) in Prometheus text.
    static func sample(_ text: String, _ name: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }

    @Test("/readyz is 200 while checkpoints sign the trail, and 503 naming `checkpoint` once a row has waited past audit.checkpointMaxAgeSeconds (the key file gone); /healthz stays 200; the metrics say the same")
    func readinessFollowsCheckpoints() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1", "PHOTOSD_AUDIT_CHECKPOINT_MAX_AGE_SECONDS": "3"]
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        defer { _ = daemon.stop() }
        let metricsURL = try #require(daemon.process.metricsURL)
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        try await Task.sleep(for: .seconds(2))
        let ready = try await daemon.request("GET", "/readyz")
        #expect(ready.0 == 200 && ready.1["status"] as? String == "ready", "\(ready.1)")
        let before = try await Self.get(metricsURL + "/metrics").1
        #expect(Self.sample(before, "photosd_ready") == 1 && Self.sample(before, "photosd_storage_up") == 1, "\(before)")
        #expect((Self.sample(before, "photosd_audit_checkpoint_age_seconds") ?? 99) < 3, "\(before)")

        // Checkpoints stop (the signing key's file is gone); new rows wait.
        try FileManager.default.removeItem(atPath: directory.file("audit-signing.key"))
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        try await Task.sleep(for: .seconds(4.5))
        let (status, body) = try await daemon.request("GET", "/readyz")
        #expect(status == 503, "\(body)")
        #expect(body["status"] as? String == "unready" && body["check"] as? String == "checkpoint", "\(body)")
        let message = ((body["error"] as? [String: Any])?["message"] as? String) ?? ""
        #expect(message.contains("audit.checkpointMaxAgeSeconds") && !message.contains(directory.path), "\(message)")
        #expect(try await daemon.request("GET", "/healthz").0 == 200, "liveness follows readiness")
        let after = try await Self.get(metricsURL + "/metrics").1
        #expect(Self.sample(after, "photosd_ready") == 0 && Self.sample(after, "photosd_storage_up") == 1, "\(after)")
        #expect((Self.sample(after, "photosd_audit_checkpoint_age_seconds") ?? 0) > 3, "\(after)")
        #expect(daemon.log.contains("writing an audit checkpoint failed"))
    }

    @Test("/metrics: build info with the version and commit, this process's CPU, memory and descriptors, storage up, the sweep's and the live trail's age")
    func metricsFigures() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path)
        defer { _ = daemon.stop() }
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        let text = try await Self.get(try #require(daemon.process.metricsURL) + "/metrics").1
        let build = text.split(separator: "\n").first { $0.hasPrefix("photosd_build_info{") }.map(String.init) ?? ""
        #expect(build.contains(#"version="\#(PhotosVersion.current)""#) && build.wholeMatch(of: /photosd_build_info\{.*commit="([0-9a-f]{12}|unknown)".*\} 1(\.0)?/) != nil, "\(build)")
        #expect((Self.sample(text, "process_cpu_seconds_total") ?? 0) > 0, "\(text)")
        #expect((Self.sample(text, "process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((Self.sample(text, "process_open_fds") ?? 0) > 3)
        #expect(Self.sample(text, "photosd_storage_up") == 1)
        #expect(Self.sample(text, "photosd_session_sweep_age_seconds").map { $0 >= 0 && $0 < 60 } == true, "the sweep runs at start")
        #expect(Self.sample(text, "photosd_audit_oldest_row_age_seconds").map { $0 >= 0 && $0 < 60 } == true)
        // Counted from the published commits, whoever made them (here: the one session created).
        #expect(text.contains(#"photosd_session_commits_total{kind="created"} 1"#), "\(text)")
        // The audit rows those commits appended: every row of the trail (a seeded database has no other).
        let database = try Connection(path: directory.path + "/photos.db", mode: .readOnly)
        defer { database.close() }
        let rows = try await database.queryOne("SELECT count(*) AS rows FROM audit_events WHERE session_id NOT IN ('operator', 'api')")?.int("rows")
        #expect(rows.map(Double.init) == Self.sample(text, "photosd_audit_rows_written_total") && (rows ?? 0) > 0, "\(String(describing: rows)): \(text)")
    }

    @Test("a readiness probe that does not answer is given up at its deadline, without waiting for it; one that fails says its kind only")
    func probeDeadline() async throws {
        let started = ContinuousClock.now
        let stuck = await Readiness.within(.milliseconds(200)) { try await Task.sleep(for: .seconds(60)); return 1 }
        guard case .failure(.timedOut) = stuck else { Issue.record("a stuck probe gave \(stuck)"); return }
        #expect(ContinuousClock.now - started < .seconds(30), "the probe waited for its stuck body")
        struct Located: Error, CustomStringConvertible { var description: String { "postgres://photos@db.internal:5432/photos" } }
        let failed = await Readiness.within(.seconds(5)) { () async throws -> Int in throw Located() }
        guard case .failure(let failure) = failed else { Issue.record("\(failed)"); return }
        #expect(!failure.words(.seconds(5)).contains("postgres://"), "\(failure)")
        let answered = await Readiness.within(.seconds(5)) { 42 }
        guard case .success(42) = answered else { Issue.record("\(answered)"); return }
    }

    @Test("SIGHUP is logged and ignored: photosd goes on serving, and SIGTERM still ends it with 0")
    func hangUp() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(["--db", "photos.db"], in: directory.path)
        for _ in 0..<3 {
            #expect(kill(daemon.process.pid, SIGHUP) == 0)
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try await daemon.request("GET", "/healthz").0 == 200)
        #expect(daemon.log.contains("SIGHUP received and ignored"), "\(daemon.log.suffix(500))")
        #expect(daemon.stop() == 0)
    }
}
