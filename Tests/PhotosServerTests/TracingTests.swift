import Foundation
import PhotosTestSupport
import PhotosdProcess
import Testing

/// Traces (design §15, `tracing.otlpEndpoint`), received by a real OTLP/HTTP receiver: a small
/// Python server that decodes each export with the `opentelemetry-proto` package
/// (Tests/Fixtures/otlp_receiver.py).
@Suite("Tracing by OTLP/HTTP", .enabled(if: OTLPReceiver.available, OTLPReceiver.reason))
struct TracingTests {
    @Test("one trace per request: the HTTP span honours traceparent, a child for the session action, children for the storage with db.system.name; no id, secret or name in a span; log lines carry trace_id")
    func spansAndParents() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let receiver = try OTLPReceiver(output: directory.file("spans.jsonl"))
        defer { receiver.stop() }
        let daemon = try await Daemon(["--seed-demo"], in: directory.path, environment: [
            "PHOTOSD_TRACING_OTLP_ENDPOINT": "http://127.0.0.1:\(receiver.port)", "PHOTOSD_LOG_FORMAT": "json", "PHOTOSD_LOG_LEVEL": "info",
        ])
        let (_, created) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(created["id"] as? String)
        let secret = try #require(created["sessionSecret"] as? String)
        // The client's own trace: photosd's spans join it.
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
        let parentID = "00f067aa0ba902b7"
        let (status, _) = try await daemon.request(
            "POST", "/v1/sessions/\(id)/actions", body: #"{"action":"submit","username":"nobody","password":"wrong password"}"#,
            headers: ["traceparent": "00-\(traceID)-\(parentID)-01"])
        #expect(status == 409)  // not offered on photos: a refusal, recorded and traced all the same
        let (acted, _) = try await daemon.request(
            "POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":2}"#, headers: ["traceparent": "00-\(traceID)-\(parentID)-01"])
        #expect(acted == 200)
        #expect(daemon.stop() == 0)  // the exporter sends what is left at shutdown
        let spans = try receiver.spans()
        let trace = spans.filter { $0.traceId == traceID }
        let servers = trace.filter { $0.kind == 2 }  // SPAN_KIND_SERVER
        #expect(servers.count == 2, "\(trace.map(\.name))")
        for server in servers {
            #expect(server.parentSpanId == parentID, "the HTTP span is a child of the client's: \(server)")
            #expect(server.attributes["http.route"] as? String == "/v1/sessions/{id}/actions", "\(server.attributes)")
        }
        let actions = trace.filter { $0.name == "session.action" }
        #expect(Set(actions.map { $0.attributes["photosd.action"] as? String ?? "" }) == ["submit", "selectPhoto"])
        for action in actions {
            #expect(servers.contains { $0.spanId == action.parentSpanId }, "the action's parent is its request's span: \(action)")
            #expect(action.attributes["db.system.name"] as? String == "sqlite")
            let storage = trace.filter { $0.parentSpanId == action.spanId }
            #expect(storage.contains { $0.name == "db.writeDecision" }, "\(storage.map(\.name))")
            #expect(storage.allSatisfy { $0.attributes["db.system.name"] as? String == "sqlite" })
        }
        #expect(actions.first { $0.attributes["photosd.action"] as? String == "selectPhoto" }?.attributes["photosd.outcome"] as? String == "navigated")
        #expect(spans.allSatisfy { $0.service == "photosd" })
        // Nothing that names or opens the session, nor a user.
        let text = try String(contentsOfFile: directory.file("spans.jsonl"), encoding: .utf8)
        for forbidden in [id, secret, "nobody", "wrong password"] {
            #expect(!text.contains(forbidden), "a span carries \(forbidden.prefix(12))…")
        }
        // The request lines inside a span carry its trace id.
        let lines = daemon.log.split(separator: "\n").filter { $0.contains(#""message":"request""#) && $0.contains("/actions") }
        #expect(!lines.isEmpty && lines.allSatisfy { $0.contains(#""trace_id":"\#(traceID)""#) }, "\(lines.prefix(2))")
    }

    @Test("a tracing.otlpEndpoint that is not an http(s) URL stops photosd with one line naming the setting")
    func badEndpoint() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (status, output) = try await runTool(
            Daemon.binDirectory + "/photosd", ["--port", "0", "--no-console", "--no-metrics"], in: directory.path,
            environment: ["PHOTOSD_TRACING_OTLP_ENDPOINT": "collector:4318"])
        #expect(status != 0)
        #expect(output.contains("tracing.otlpEndpoint"), "\(output)")
    }
}

/// Tests/Fixtures/otlp_receiver.py, running.
final class OTLPReceiver {
    /// True when python3 has opentelemetry-proto — or when scripts/test says it must
    /// (`PHOTOSD_REQUIRE_OTLP=1`: then a missing package fails the test instead of skipping it).
    static var available: Bool {
        ProcessInfo.processInfo.environment["PHOTOSD_REQUIRE_OTLP"] == "1"
            || PythonTools.canImport("opentelemetry.proto")
    }
    static var reason: Comment { "needs python3 with opentelemetry-proto (scripts/install-dependencies installs it)" }

    let process: ChildProcess
    let port: Int
    let output: String

    /// One span as the receiver wrote it.
    struct Span: CustomStringConvertible {
        let name: String
        let kind: Int
        let traceId: String
        let spanId: String
        let parentSpanId: String
        let attributes: [String: Any]
        let service: String?
        var description: String { "\(name) \(spanId) ← \(parentSpanId) \(attributes)" }
    }

    init(output: String) throws {
        self.output = output
        let portFile = output + ".port"
        let python = PythonTools.command([BuiltProducts.packageRoot + "/Tests/Fixtures/otlp_receiver.py", output, portFile])
        let process = try spawnProcess(python.executable, python.arguments)
        self.process = process
        // It writes its port to a file once it listens (at most 20 s).
        let limit = Date().addingTimeInterval(20)
        var port: Int?
        while port == nil, Date() < limit, process.isRunning {
            port = (try? String(contentsOfFile: portFile, encoding: .utf8)).flatMap { Int($0) }
            if port == nil { usleep(50_000) }
        }
        guard let port else {
            process.signal(SIGKILL)
            throw POSIXError(.EIO)
        }
        self.port = port
    }

    func spans() throws -> [Span] {
        guard let text = try? String(contentsOfFile: output, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
            return Span(
                name: object["name"] as? String ?? "", kind: object["kind"] as? Int ?? 0, traceId: object["traceId"] as? String ?? "",
                spanId: object["spanId"] as? String ?? "", parentSpanId: object["parentSpanId"] as? String ?? "",
                attributes: object["attributes"] as? [String: Any] ?? [:], service: object["service"] as? String)
        }
    }

    func stop() {
        // SIGKILL: a child of the test process may inherit SIGTERM ignored, and Python then
        // serves on.
        process.signal(SIGKILL)
        process.waitForExit()
    }
}
