import Foundation
import PhotosTestSupport
import Testing

/// `log.format: json`: every line photosd writes is one JSON object with `time`, `level` and
/// `message`; a request's line has its status, client address and `durationMs` as fields.
@Suite("JSON logs")
struct JSONLogTests {
    @Test("with log.format json every line is a JSON object, and a request's line has durationMs and the port really listened on; a key file made at start is said once, by path")
    func jsonLines() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await migrateDefaultDatabase(in: directory.path)
        let daemon = try await Daemon(["--no-console"], in: directory.path, environment: ["PHOTOSD_LOG_FORMAT": "json"])
        let (status, _) = try await daemon.request("POST", "/v1/sessions", body: "{}")
        #expect(status == 201)
        #expect(daemon.stop() == 0)
        let lines = daemon.log.split(separator: "\n").filter { !$0.isEmpty }
        #expect(lines.count >= 3, "\(daemon.log)")
        var requests: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let object else {
                Issue.record("not a JSON object: \(line)")
                continue
            }
            #expect(object["time"] is String && object["level"] is String && object["message"] is String, "\(line)")
            if let time = object["time"] as? String { #expect(time.hasSuffix("Z") && time.count == 24, "\(time)") }
            if object["message"] as? String == "request" { requests.append(object) }
        }
        let created = try #require(requests.first { $0["http.path"] as? String == "/v1/sessions" })
        #expect(created["http.status"] as? Int == 201)
        #expect(created["http.method"] as? String == "POST")
        #expect(created["client.address"] as? String == "127.0.0.1")
        #expect(created["http.route"] as? String == "/v1/sessions")
        #expect((created["hb.request.id"] as? String)?.isEmpty == false, "the request id: \(created)")
        let duration = try #require(created["durationMs"] as? Double, "\(created)")
        #expect(duration >= 0 && duration < 10_000)
        // --port 0: the line says the port the system picked, not 0.
        #expect(created["address"] as? String == "127.0.0.1:\(daemon.port)", "\(created)")

        // A fresh directory: photosd made the audit signing key and the server secret, and said so
        // (where, never what: the key's bytes are not in the log).
        let made = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { ($0["message"] as? String)?.hasPrefix("created the ") == true }
        #expect(made.count == 2, "\(made) in \(daemon.log)")
        #expect(made.contains { ($0["message"] as? String)?.contains("audit signing key") == true && ($0["path"] as? String)?.hasSuffix("audit-signing.key") == true })
        let key = try #require(FileManager.default.contents(atPath: directory.file("data/audit-signing.key")))
        #expect(!daemon.log.contains(key.base64EncodedString()) && !daemon.log.contains(key.map { String(format: "%02x", $0) }.joined()))
        // A second start finds them and says nothing of them.
        let again = try await Daemon(["--no-console"], in: directory.path, environment: ["PHOTOSD_LOG_FORMAT": "json"])
        #expect(again.stop() == 0)
        #expect(!again.log.contains("created the "), "\(again.log)")
    }

    @Test("a log.format that is neither text nor json stops photosd with one line naming it")
    func badFormat() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await migrateDefaultDatabase(in: directory.path)
        let (status, output) = try await runTool(
            Daemon.binDirectory + "/photosd", ["--port", "0", "--no-console"], in: directory.path, environment: ["PHOTOSD_LOG_FORMAT": "xml"])
        #expect(status != 0)
        #expect(output.contains("log.format") && output.contains("text or json"), "\(output)")
    }
}
