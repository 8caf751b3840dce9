import Foundation
import PhotosTestSupport
import PhotosdProcess
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `photos-admin audit witness serve` over real HTTP: a log client written in Python from the
/// C2SP texts alone (Tests/Fixtures/tlog-witness-client) drives it through every answer; a real
/// photosd's checkpoint cosigned by it makes a receipt that `check-receipt --witness` accepts and
/// `--quorum` refuses without; `audit witness key` prints the key it cosigns with.
@Suite("photos-admin audit witness serve", .serialized)
struct WitnessServeTests {
    static var admin: String { Daemon.binDirectory + "/photos-admin" }
    static let client = BuiltProducts.packageRoot + "/Tests/Fixtures/tlog-witness-client/witness_client.py"

    /// A witness on a free port, trusting `logs`.
    static func serve(in directory: TemporaryDirectory, logs: [String]) throws -> PhotosdProcess {
        try PhotosdProcess(
            binary: admin,
            arguments: ["audit", "witness", "serve", "--listen", "127.0.0.1:0", "--name", "witness.example/w1", "--key-file", directory.file("witness.key"),
                        "--state", directory.file("witness.db")] + logs.flatMap { ["--log", $0] },
            directory: directory.path, portArguments: [], listening: "listening on")
    }

    static func post(_ url: String, _ body: String) async throws -> (Int, String, String) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Content-Type") ?? "", String(decoding: data, as: UTF8.self))
    }

    @Test("an independent log client (Python, from the C2SP texts) gets every answer of add-checkpoint as the spec says")
    func independentClient() async throws {
        let python = try await OutsideVerifierTests.python()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let keygen = try await runProcess(python, [Self.client, "keygen", "--origin", "client.example/log", "--out", directory.file("log.key")], in: directory.path)
        #expect(keygen.status == 0, "\(keygen.output)")
        let logKey = keygen.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let witnessKey = try await runTool(Self.admin, ["audit", "witness", "key", "--name", "witness.example/w1", "--key-file", directory.file("witness.key")], in: directory.path)
        #expect(witnessKey.0 == 0, "\(witnessKey.1)")
        let mode = try FileManager.default.attributesOfItem(atPath: directory.file("witness.key"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let witness = try Self.serve(in: directory, logs: [logKey])
        defer { witness.stop() }
        let cosigner = witnessKey.1.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(witness.log.contains("witness \(cosigner) listening on"), "the key it serves with is the one `key` printed: \(witness.log)")
        let drive = try await runProcess(python, [Self.client, "drive", "--url", witness.baseURL, "--log-key", directory.file("log.key"), "--witness", cosigner], in: directory.path)
        #expect(drive.status == 0 && !drive.stdout.contains("FAIL"), "\(drive.output)\n--- witness:\n\(witness.log)")
        let steps = drive.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }
        #expect(steps.count >= 10, "\(drive.stdout)")
    }

    @Test("a photosd checkpoint cosigned by the witness: the receipt carrying it checks with --witness; --quorum 2 with an absent witness fails at witnesses; a second log's note is 404; a bad request is 400")
    func receiptWithCosignature() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "86399", "PHOTOSD_AUDIT_CHECKPOINT_MAX_AGE_SECONDS": "86400"]
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        defer { _ = daemon.stop() }
        let (_, session) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(session["id"] as? String)
        #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":1}"#).0 == 200)
        #expect(try await runTool(Self.admin, ["audit", "checkpoint", "--db", "photos.db"], in: directory.path).0 == 0)
        let noteKey = try await runTool(Self.admin, ["audit", "key", "--note", "--db", "photos.db"], in: directory.path).1.trimmingCharacters(in: .whitespacesAndNewlines)
        let witness = try Self.serve(in: directory, logs: [noteKey])
        defer { witness.stop() }
        let cosigner = try #require(witness.log.firstMatch(of: /witness (\S+) listening on/).map { String($0.1) })

        var request = URLRequest(url: URL(string: daemon.baseURL + "/v1/sessions/\(id)/receipt")!)
        request.setValue(SessionSecretBook.authorization(for: "/v1/sessions/\(id)"), forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        var receipt = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let checkpoint = try #require(receipt["checkpoint"] as? String)
        let (status, _, cosignature) = try await Self.post(witness.baseURL + "/add-checkpoint", "old 0\n\n" + checkpoint)
        #expect(status == 200 && cosignature.hasPrefix("\u{2014} witness.example/w1 "), "\(status) \(cosignature)")
        receipt["checkpoint"] = checkpoint + cosignature
        try JSONSerialization.data(withJSONObject: receipt).write(to: URL(fileURLWithPath: directory.file("cosigned.json")))
        try data.write(to: URL(fileURLWithPath: directory.file("plain.json")))

        let checked = try await runTool(Self.admin, ["audit", "check-receipt", "cosigned.json", "--key", noteKey, "--witness", cosigner], in: directory.path)
        #expect(checked.0 == 0 && checked.1.contains("cosigned by witness.example/w1"), "\(checked.1)")
        // Without a cosignature, and with a quorum the witnesses given cannot meet.
        let absent = try await runTool(Self.admin, ["audit", "witness", "key", "--name", "absent.example/w", "--key-file", directory.file("absent.key")], in: directory.path).1
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let unsigned = try await runTool(Self.admin, ["audit", "check-receipt", "plain.json", "--key", noteKey, "--witness", cosigner], in: directory.path)
        #expect(unsigned.0 == 3 && unsigned.1.contains("FAILED at witnesses"), "\(unsigned.1)")
        let short = try await runTool(Self.admin, ["audit", "check-receipt", "cosigned.json", "--key", noteKey, "--witness", cosigner, "--witness", absent, "--quorum", "2"], in: directory.path)
        #expect(short.0 == 3 && short.1.contains("1 of the 2 witnesses"), "\(short.1)")
        let enough = try await runTool(Self.admin, ["audit", "check-receipt", "cosigned.json", "--key", noteKey, "--witness", cosigner, "--witness", absent, "--quorum", "1"], in: directory.path)
        #expect(enough.0 == 0, "\(enough.1)")
        let badQuorum = try await runTool(Self.admin, ["audit", "check-receipt", "cosigned.json", "--key", noteKey, "--quorum", "1"], in: directory.path)
        #expect(badQuorum.0 == 64, "\(badQuorum.1)")
        // The witness again: the same checkpoint from its size is cosigned; old 0 now is 409 with its size.
        let size = try #require(checkpoint.split(separator: "\n").dropFirst().first.map(String.init))
        let again = try await Self.post(witness.baseURL + "/add-checkpoint", "old 0\n\n" + checkpoint)
        #expect(again.0 == 409 && again.1.hasPrefix("text/x.tlog.size") && again.2 == size + "\n", "\(again)")
        #expect(try await Self.post(witness.baseURL + "/add-checkpoint", "old \(size)\n\n" + checkpoint).0 == 200)
        #expect(try await Self.post(witness.baseURL + "/add-checkpoint", "nonsense").0 == 400)
    }
}
