import Foundation
import PhotosTestSupport
import PhotosdProcess
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The signed tree head through a real photosd and photos-admin: an older backup restored under
/// the same key makes photosd serve but sign nothing (`/readyz` 503 `log`, one log line naming
/// both heads, `photosd_log_sign_refused_total`), `check` and `audit verify` exit 3 and name the
/// ways on, and `audit log restart` is the way on; a witness holding the old key follows a key
/// rotation through `/v1/log/rotations`.
@Suite("The signed tree head over HTTP and the operator's tools")
struct SignedHeadEndToEndTests {
    static var admin: String { Daemon.binDirectory + "/photos-admin" }

    static func get(_ url: String) async throws -> (Int, String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// Waits (at most 20 s) until `condition` holds.
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        let limit = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < limit {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return try await condition()
    }

    @Test("an older backup restored: photosd serves and signs nothing (/readyz log, the metric, one log line); check and verify exit 3; audit log restart goes on")
    func restoredBackup() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1", "PHOTOSD_METRICS_PORT": "0"]
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        for _ in 0..<2 { #expect(try await daemon.request("POST", "/v1/sessions").0 == 201) }
        #expect(try await Self.eventually { FileManager.default.fileExists(atPath: directory.file("audit-signing.key.signed")) })
        let backup = try await runTool(Self.admin, ["backup", "--db", "photos.db", "backup.db"], in: directory.path)
        #expect(backup.0 == 0, "\(backup.1)")
        let before = try String(contentsOfFile: directory.file("audit-signing.key.signed"), encoding: .utf8)
        for _ in 0..<3 { #expect(try await daemon.request("POST", "/v1/sessions").0 == 201) }
        #expect(try await Self.eventually {
            (try? String(contentsOfFile: directory.file("audit-signing.key.signed"), encoding: .utf8)) != before
        })
        #expect(daemon.stop() == 0)
        let signed = try String(contentsOfFile: directory.file("audit-signing.key.signed"), encoding: .utf8)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.file("audit-signing.key.signed"))[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(signed.wholeMatch(of: /\d+ [A-Za-z0-9+\/]{43}= \d+\n/) != nil, "\(signed)")

        // The restore: the backup in place of the database; the key and its signed head stay.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory.file("photos.db" + suffix)) }
        try FileManager.default.copyItem(atPath: directory.file("backup.db"), toPath: directory.file("photos.db"))
        let check = try await runTool(Self.admin, ["check", "--db", "photos.db"], in: directory.path)
        #expect(check.0 == 3 && check.1.contains("log: FAILED") && check.1.contains("audit log restart --origin"), "\(check.1)")
        let size = String(signed.split(separator: " ")[0])
        #expect(check.1.contains("the \(size) the key signed"), "\(check.1)")
        let verify = try await runTool(Self.admin, ["audit", "verify", "--db", "photos.db"], in: directory.path)
        #expect(verify.0 == 3 && verify.1.contains("transparency log"), "\(verify.1)")

        let restored = try await Daemon(["--db", "photos.db"], in: directory.path, environment: environment)
        defer { _ = restored.stop() }
        #expect(try await restored.request("POST", "/v1/sessions").0 == 201, "photosd serves")
        let (status, body) = try await restored.request("GET", "/readyz")
        #expect(status == 503 && body["check"] as? String == "log", "\(body)")
        #expect(try await Self.eventually { restored.log.contains("refusing to sign the audit log") })
        let metricsURL = try #require(restored.process.metricsURL)
        let refusedCounted = try await Self.eventually {
            let text = try await Self.get(metricsURL + "/metrics").1
            return text.split(separator: "\n").contains { $0.hasPrefix("photosd_log_sign_refused_total ") && !$0.hasSuffix(" 0") }
        }
        let metricsText = try await Self.get(metricsURL + "/metrics").1
        #expect(refusedCounted, "\(metricsText.split(separator: "\n").filter { $0.contains("refused") })")
        // Said once, not every round.
        try await Task.sleep(for: .seconds(2))
        #expect(restored.log.components(separatedBy: "refusing to sign the audit log").count - 1 <= 2, "\(restored.log)")
        #expect(try String(contentsOfFile: directory.file("audit-signing.key.signed"), encoding: .utf8) == signed, "the signed head stays")

        // The way on, beside the running photosd.
        let restart = try await runTool(Self.admin, ["audit", "log", "restart", "--origin", "shop.example/photos-2", "--db", "photos.db"], in: directory.path)
        #expect(restart.0 == 0 && restart.1.contains("after the old log's"), "\(restart.1)")
        #expect(try await Self.eventually { try await restored.request("GET", "/readyz").0 == 200 })
        let note = try await Self.get(restored.baseURL + "/v1/log/checkpoint").1
        #expect(note.hasPrefix("shop.example/photos-2\n"), "\(note)")
        let checkAfter = try await runTool(Self.admin, ["check", "--db", "photos.db"], in: directory.path)
        #expect(checkAfter.0 == 0 && checkAfter.1.contains("log origin: shop.example/photos-2"), "\(checkAfter.1)")
    }

    @Test("one origin per log: photosd configured with another origin than the signed one does not start, naming the setting; without the setting it and photos-admin use the stored one")
    func originStored() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(
            ["--seed-demo", "--db", "photos.db"], in: directory.path,
            environment: ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1", "PHOTOSD_AUDIT_LOG_ORIGIN": "shop.example/log"])
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        #expect(try await Self.eventually { FileManager.default.fileExists(atPath: directory.file("audit-signing.key.signed")) })
        #expect(daemon.stop() == 0)

        let refused = try await runTool(
            Daemon.binDirectory + "/photosd", ["--db", "photos.db", "--port", "0", "--no-console", "--no-metrics"], in: directory.path,
            environment: ["PHOTOSD_AUDIT_LOG_ORIGIN": "other.example/log"])
        #expect(refused.0 != 0 && refused.1.contains("audit.logOrigin") && refused.1.contains("shop.example/log"), "\(refused.1)")
        let admin = try await runTool(
            Self.admin, ["audit", "checkpoint", "--db", "photos.db"], in: directory.path, environment: ["PHOTOSD_AUDIT_LOG_ORIGIN": "other.example/log"])
        #expect(admin.0 != 0 && admin.1.contains("audit.logOrigin"), "\(admin.1)")

        let note = try await runTool(Self.admin, ["audit", "key", "--note", "--db", "photos.db"], in: directory.path)
        #expect(note.0 == 0 && note.1.hasPrefix("shop.example/log+"), "\(note.1)")
        let unset = try await Daemon(["--db", "photos.db"], in: directory.path, environment: ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1"])
        defer { _ = unset.stop() }
        #expect(try await unset.request("POST", "/v1/sessions").0 == 201)
        #expect(try await Self.eventually {
            let (status, text) = try await Self.get(unset.baseURL + "/v1/log/checkpoint")
            return status == 200 && text.hasPrefix("shop.example/log\n") && !text.contains("\n1\n")
        })
        #expect(try await unset.request("GET", "/readyz").0 == 200)
    }

    @Test("audit witness holding the old key follows a rotation through /v1/log/rotations and keeps the new key; a note under an unrelated key still fails", arguments: TestStore.all)
    func witnessFollowsRotation(store: TestStore) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let postgres = store == .postgres ? try await PostgresTestDatabase.create() : nil
        defer { if let postgres { Task { await postgres.drop() } } }
        let db = postgres?.url() ?? "photos.db"
        // The key beside a SQLite file; under data/ of the working directory for a URL.
        let signedHead = directory.file(postgres == nil ? "audit-signing.key.signed" : "data/audit-signing.key.signed")
        let daemon = try await Daemon(["--seed-demo", "--db", db], in: directory.path, environment: ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1"])
        defer { _ = daemon.stop() }
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        #expect(try await Self.eventually { FileManager.default.fileExists(atPath: signedHead) })
        let oldKey = try await runTool(Self.admin, ["audit", "key", "--note", "--db", db], in: directory.path).1.trimmingCharacters(in: .whitespacesAndNewlines)
        let witness = ["audit", "witness", "--state", "kept.note", "--url", daemon.baseURL, "--key", oldKey]
        let first = try await runTool(Self.admin, witness, in: directory.path)
        #expect(first.0 == 0, "\(first.1)")
        #expect(try await Self.get(daemon.baseURL + "/v1/log/rotations") == (200, ""))

        let rotate = try await runTool(Self.admin, ["audit", "key", "--rotate", "--db", db], in: directory.path)
        #expect(rotate.0 == 0, "\(rotate.1)")
        let newKey = try await runTool(Self.admin, ["audit", "key", "--note", "--db", db], in: directory.path).1.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(newKey != oldKey)
        let rotations = try await Self.get(daemon.baseURL + "/v1/log/rotations").1
        #expect(rotations.contains("\nkey \(newKey)\n"), "\(rotations)")
        // A checkpoint signed by the new key alone.
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        #expect(try await Self.eventually { try await Self.get(daemon.baseURL + "/v1/log/checkpoint").1.components(separatedBy: "\n\u{2014} ").count == 2 })

        let followed = try await runTool(Self.admin, witness, in: directory.path)
        #expect(followed.0 == 0 && followed.1.contains("followed the log's key rotation"), "\(followed.1)")
        #expect(try String(contentsOfFile: directory.file("kept.note.keys"), encoding: .utf8) == newKey + "\n")
        // The next run reads the kept key, not the chain.
        let again = try await runTool(Self.admin, witness, in: directory.path)
        #expect(again.0 == 0 && !again.1.contains("followed"), "\(again.1)")
        // A key the chain does not lead to is not trusted.
        let stranger = ["audit", "witness", "--state", "stranger.note", "--url", daemon.baseURL, "--key", "other+00000000+AQ=="]
        let refused = try await runTool(Self.admin, stranger, in: directory.path)
        #expect(refused.0 != 0, "\(refused.1)")
    }
}
