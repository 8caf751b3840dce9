import Foundation
import PhotosModel
import PhotosTestSupport
import PhotosdProcess
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// photosd as a C2SP tlog-witness client (`audit.witnesses`), over real HTTP against two real
/// witnesses: one written in Python from the C2SP texts alone (Tests/Fixtures/tlog-witness-server)
/// and `photos-admin audit witness serve`; a third configured witness is down.
@Suite("photosd asks witnesses to cosign", .serialized)
struct WitnessClientTests {
    static var admin: String { Daemon.binDirectory + "/photos-admin" }
    static let independentWitness = BuiltProducts.packageRoot + "/Tests/Fixtures/tlog-witness-server/witness_server.py"

    /// The independent witness on a free port, trusting `logKey`.
    static func python(in directory: TemporaryDirectory, logKey: String) async throws -> PhotosdProcess {
        let python = try await OutsideVerifierTests.python()
        return try PhotosdProcess(
            binary: python,
            arguments: [independentWitness, "--listen", "127.0.0.1:0", "--name", "py.example/w", "--key-file", directory.file("py.key"),
                        "--log", logKey, "--state", directory.file("py-state.json")],
            directory: directory.path, portArguments: [], listening: "listening on")
    }

    /// `photos-admin audit witness serve` on a free port, trusting `logKey`.
    static func ours(in directory: TemporaryDirectory, logKey: String, name: String = "ours.example/w") throws -> PhotosdProcess {
        try PhotosdProcess(
            binary: admin,
            arguments: ["audit", "witness", "serve", "--listen", "127.0.0.1:0", "--name", name, "--key-file", directory.file("ours.key"),
                        "--state", directory.file("ours-state.db"), "--log", logKey],
            directory: directory.path, portArguments: [], listening: "listening on")
    }

    /// The cosigner key a witness printed as it started.
    static func cosigner(_ witness: PhotosdProcess) throws -> String {
        try #require(witness.log.firstMatch(of: /witness (\S+) listening on/).map { String($0.1) })
    }

    /// `audit.witnesses` as PHOTOSD_AUDIT_WITNESSES takes it.
    static func witnesses(_ entries: [(name: String, url: String, key: String)]) throws -> String {
        let list = entries.map { ["name": $0.name, "url": $0.url, "key": $0.key] }
        return String(decoding: try JSONSerialization.data(withJSONObject: list, options: [.sortedKeys]), as: UTF8.self)
    }

    /// A new database and its log's note key, before photosd starts (the witnesses need it).
    static func prepareLog(in directory: TemporaryDirectory) async throws -> String {
        #expect(try await runTool(admin, ["migrate", "--db", "photos.db"], in: directory.path).0 == 0)
        let key = try await runTool(admin, ["audit", "key", "--note", "--db", "photos.db"], in: directory.path)
        #expect(key.0 == 0, "\(key.1)")
        return key.1.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A session with a purchase-flow step or two: its trail has rows.
    static func act(_ daemon: Daemon) async throws -> String {
        let (_, session) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(session["id"] as? String)
        #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":1}"#).0 == 200)
        return id
    }

    /// A session's receipt (status and body bytes).
    static func receipt(_ daemon: Daemon, _ id: String) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: daemon.baseURL + "/v1/sessions/\(id)/receipt")!)
        request.setValue(SessionSecretBook.authorization(for: "/v1/sessions/\(id)"), forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// The value of `photosd_witness_cosigned_size{witness="name"}`.
    static func cosignedSize(_ metrics: String, _ name: String) -> Double? {
        metrics.split(separator: "\n").first { $0.hasPrefix("photosd_witness_cosigned_size{witness=\"\(name)\"}") }
            .flatMap { $0.split(separator: " ").last.flatMap { Double($0) } }
    }

    @Test("""
        two witnesses (the independent Python one and ours) cosign photosd's checkpoints, a third is down: the checkpoint and the receipt \
        carry both cosignatures, check-receipt --quorum 2 passes and --quorum 3 fails, Go's note.Open accepts the receipt, the metric \
        moves for the two and stays 0 for the dead one, which is one log line
        """)
    func twoWitnessesCosign() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logKey = try await Self.prepareLog(in: directory)
        let python = try await Self.python(in: directory, logKey: logKey)
        defer { python.stop() }
        let ours = try Self.ours(in: directory, logKey: logKey)
        defer { ours.stop() }
        let dead = try await runTool(Self.admin, ["audit", "witness", "key", "--name", "dead.example/w", "--key-file", directory.file("dead.key")], in: directory.path)
            .1.trimmingCharacters(in: .whitespacesAndNewlines)
        let (pyKey, ourKey) = (try Self.cosigner(python), try Self.cosigner(ours))
        let environment = [
            "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1", "PHOTOSD_METRICS_PORT": "0",
            "PHOTOSD_AUDIT_WITNESSES": try Self.witnesses([
                ("py", python.baseURL, pyKey), ("ours", ours.baseURL + "/", ourKey), ("dead", "http://127.0.0.1:1", dead),
            ]),
            "PHOTOSD_AUDIT_WITNESS_QUORUM": "2",
        ]
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        defer { _ = daemon.stop() }
        let id = try await Self.act(daemon)

        // The receipt is 202 until a checkpoint covering the row has two cosignatures, then carries them.
        var receipt: (Int, Data) = (0, Data())
        #expect(try await SignedHeadEndToEndTests.eventually {
            receipt = try await Self.receipt(daemon, id)
            return receipt.0 == 200
        }, "\(receipt.0) \(String(decoding: receipt.1, as: UTF8.self))\n\(daemon.log)")
        try receipt.1.write(to: URL(fileURLWithPath: directory.file("receipt.json")))
        let json = try #require(try JSONSerialization.jsonObject(with: receipt.1) as? [String: Any])
        let note = try #require(json["checkpoint"] as? String)
        #expect(note.contains("\n\u{2014} py.example/w ") && note.contains("\n\u{2014} ours.example/w "), "\(note)")
        let (status, served) = try await SignedHeadEndToEndTests.get(daemon.baseURL + "/v1/log/checkpoint")
        #expect(status == 200 && served.contains("\u{2014} py.example/w ") && served.contains("\u{2014} ours.example/w "), "\(served)")

        let both = try await runTool(Self.admin, ["audit", "check-receipt", "receipt.json", "--key", logKey, "--witness", pyKey, "--witness", ourKey, "--witness", dead, "--quorum", "2"], in: directory.path)
        #expect(both.0 == 0 && both.1.contains("cosigned by py.example/w") && both.1.contains("cosigned by ours.example/w"), "\(both.1)")
        let three = try await runTool(Self.admin, ["audit", "check-receipt", "receipt.json", "--key", logKey, "--witness", pyKey, "--witness", ourKey, "--witness", dead, "--quorum", "3"], in: directory.path)
        #expect(three.0 == 3 && three.1.contains("FAILED at witnesses"), "\(three.1)")

        // Go's sumdb/note with the log's key alone: the cosignatures are signatures of unknown keys.
        let rows = try #require(json["rows"] as? [[String: Any]])
        let inclusion = try #require(json["inclusion"] as? [String: Any])
        let newestHash = try #require(rows.last?["hash"] as? String)
        let leaf = try #require(Hex.decode(newestHash))
        let index = try #require(inclusion["logIndex"] as? Int)
        let hashes = try #require(inclusion["hashes"] as? [String])
        let go = try await GoTlogVerifier.check(["key": logKey, "note": note, "leaf": Data(leaf).base64EncodedString(), "index": index, "inclusion": hashes])
        #expect(go.status == 0, "\(go.output)")

        let metricsURL = daemon.process.metricsURL ?? ""
        let metrics = try await SignedHeadEndToEndTests.get(metricsURL + "/metrics").1
        #expect((Self.cosignedSize(metrics, "py") ?? 0) > 0 && (Self.cosignedSize(metrics, "ours") ?? 0) > 0, "\(metrics)")
        #expect(Self.cosignedSize(metrics, "dead") == 0, "\(metrics)")
        // The dead witness is said once (after the connect timeout, 5 s), and not again at the
        // next checkpoints while it stays down.
        let deadLine = "witness dead at http://127.0.0.1:1 cannot be asked to cosign"
        #expect(try await SignedHeadEndToEndTests.eventually { daemon.log.contains(deadLine) })
        for _ in 0..<2 { _ = try await Self.act(daemon); try await Task.sleep(for: .milliseconds(1_200)) }
        try await Task.sleep(for: .seconds(5))
        #expect(daemon.log.components(separatedBy: deadLine).count - 1 == 1, "\(daemon.log)")
        #expect(!daemon.log.contains("refused to cosign"), "\(daemon.log)")
    }

    @Test("""
        a fork under the key (the database and the key's directory restored from an older backup): the witness refuses with 422, photosd \
        logs the refusal, the metric stays, new receipts stay 202, and every cosigned note photosd served agrees with the witness's
        """)
    func forkIsRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logKey = try await Self.prepareLog(in: directory)
        let witness = try Self.ours(in: directory, logKey: logKey)
        defer { witness.stop() }
        let environment = [
            "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1", "PHOTOSD_METRICS_PORT": "0",
            "PHOTOSD_AUDIT_WITNESSES": try Self.witnesses([("w", witness.baseURL, try Self.cosigner(witness))]),
        ]
        var served: [String] = []
        func checkpointNote(_ daemon: Daemon) async throws -> String? {
            let (status, note) = try await SignedHeadEndToEndTests.get(daemon.baseURL + "/v1/log/checkpoint")
            return status == 200 ? note : nil
        }
        let first = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        _ = try await Self.act(first)
        #expect(try await SignedHeadEndToEndTests.eventually { try await checkpointNote(first) != nil })
        served.append(try #require(try await checkpointNote(first)))
        // The backup: the database, the key and its signed head, as one directory's copy would be.
        #expect(try await runTool(Self.admin, ["backup", "--db", "photos.db", "backup.db"], in: directory.path).0 == 0)
        try FileManager.default.copyItem(atPath: directory.file("audit-signing.key.signed"), toPath: directory.file("signed.backup"))
        let backedUp = try String(contentsOfFile: directory.file("signed.backup"), encoding: .utf8)
        for _ in 0..<3 { _ = try await Self.act(first) }
        #expect(try await SignedHeadEndToEndTests.eventually {
            guard let note = try await checkpointNote(first) else { return false }
            return note != served.last
        })
        served.append(try #require(try await checkpointNote(first)))
        #expect(try String(contentsOfFile: directory.file("audit-signing.key.signed"), encoding: .utf8) != backedUp)
        #expect(first.stop() == 0)

        // Both restored: the signer cannot tell; the witness can.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory.file("photos.db" + suffix)) }
        try FileManager.default.copyItem(atPath: directory.file("backup.db"), toPath: directory.file("photos.db"))
        try FileManager.default.removeItem(atPath: directory.file("audit-signing.key.signed"))
        try FileManager.default.copyItem(atPath: directory.file("signed.backup"), toPath: directory.file("audit-signing.key.signed"))
        let restored = try await Daemon(["--db", "photos.db"], in: directory.path, environment: environment)
        defer { _ = restored.stop() }
        // Other rows than the lost ones: the tree grows past the witness's size on another path.
        var fresh = ""
        for _ in 0..<6 { fresh = try await Self.act(restored) }
        #expect(try await SignedHeadEndToEndTests.eventually { restored.log.contains("refused to cosign checkpoint") }, "\(restored.log)")
        #expect(restored.log.contains("HTTP 422") || restored.log.contains("larger than this log's newest checkpoint"), "\(restored.log)")
        try await Task.sleep(for: .seconds(2))
        #expect(try await Self.receipt(restored, fresh).0 == 202, "no receipt without the witness's cosignature")
        served.append(try #require(try await checkpointNote(restored)))
        let metrics = try await SignedHeadEndToEndTests.get((restored.process.metricsURL ?? "") + "/metrics").1
        let stayed = Self.cosignedSize(metrics, "w")
        #expect(stayed != nil, "\(metrics)")
        #expect(try await runTool(Self.admin, ["audit", "verify", "--db", "photos.db"], in: directory.path).0 == 0, "the restored database verifies by itself")

        // Every note served with a cosignature: no two of one size with different roots, and
        // none past what the witness holds.
        func sizeAndRoot(_ note: String) -> (Int, String) {
            let lines = note.split(separator: "\n")
            return (Int(lines[1]) ?? -1, String(lines[2]))
        }
        var roots: [Int: String] = [:]
        for note in served {
            let (size, root) = sizeAndRoot(note)
            #expect(roots[size] == nil || roots[size] == root, "two cosigned notes of size \(size) with different roots")
            roots[size] = root
        }
        let last = try #require(served.last)
        #expect(Double(sizeAndRoot(last).0) == stayed)
        #expect(sizeAndRoot(last).0 <= sizeAndRoot(served[1]).0)
    }
}
