import DatabaseAccess
import Foundation
import SQLiteStore
import PhotosTestSupport
import Testing

/// What docs/deploy.md tells an operator to do, done: the systemd unit checked by systemd, and a
/// backup restored into a new directory that photosd then serves.
@Suite("Deploying")
struct DeployTests {
    @Test(
        "deploy/photosd.service passes systemd-analyze verify (with ExecStart pointing at the built photosd)",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "needs systemd-analyze"))
    func systemdUnit() async throws {
        let unit = try String(contentsOfFile: Daemon.packageRoot + "/deploy/photosd.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/photosd "), "the unit runs the installed binary")
        for option in ["NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "StateDirectory=photosd", "User=photosd", "CapabilityBoundingSet="] {
            #expect(unit.contains(option + "\n"), "\(option) missing")
        }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // The same unit, with the binary verify can find here (it checks ExecStart is executable).
        try unit.replacingOccurrences(of: "/usr/local/bin/photosd", with: Daemon.binDirectory + "/photosd")
            .write(toFile: directory.file("photosd.service"), atomically: true, encoding: .utf8)
        let result = try await runProcess("/usr/bin/systemd-analyze", ["verify", directory.file("photosd.service")], in: directory.path)
        #expect(result.status == 0, "\(result.output)")
        #expect(!result.output.contains("photosd.service"), "systemd-analyze warns about the unit: \(result.output)")
    }

    @Test("a backup taken while photosd serves, restored with its two key files into a new directory: photosd serves it, sessions resume, check passes")
    func restoreFromBackup() async throws {
        let live = try TemporaryDirectory()
        defer { live.remove() }
        let restored = try TemporaryDirectory()
        defer { restored.remove() }
        let admin = Daemon.binDirectory + "/photos-admin"
        let daemon = try await Daemon(["--seed-demo"], in: live.path)
        let (created, session) = try await daemon.request("POST", "/v1/sessions")
        #expect(created == 201)
        let id = try #require(session["id"] as? String)
        for body in [#"{"action":"selectPhoto","photoId":2}"#, #"{"action":"buy"}"#] {
            #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: body).0 == 200)
        }
        // The backup, while photosd serves (as docs/deploy.md says), then the keys beside it.
        try FileManager.default.createDirectory(atPath: restored.file("data"), withIntermediateDirectories: true)
        let backup = try await runTool(admin, ["backup", restored.file("data/photos.db"), "--db", "data/photos.db"], in: live.path)
        #expect(backup.0 == 0, "\(backup.1)")
        for key in ["audit-signing.key", "photosd-secret.key"] {
            try FileManager.default.copyItem(atPath: live.file("data/" + key), toPath: restored.file("data/" + key))
        }
        _ = daemon.stop()
        live.remove()

        let check = try await runTool(admin, ["check", "--db", "data/photos.db"], in: restored.path)
        #expect(check.0 == 0, "\(check.1)")
        let again = try await Daemon([], in: restored.path)
        defer { _ = again.stop() }
        let (status, resumed) = try await again.request("GET", "/v1/sessions/\(id)")
        #expect(status == 200, "\(resumed)")
        #expect(topScreen(resumed) == "signIn", "the flow resumes where it was: \(resumed)")
        let (photos, _) = try await again.request("GET", "/v1/photos")
        #expect(photos == 200)
    }
}

/// `photos-admin audit key --rotate` beside a running photosd.
@Suite("Audit key rotation, end to end")
struct KeyRotationEndToEndTests {
    @Test("photosd signs with the rotated key from its next checkpoint, without a restart; audit verify follows the chain from the first key")
    func photosdTakesTheNewKey() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let admin = Daemon.binDirectory + "/photos-admin"
        let daemon = try await Daemon(["--seed-demo"], in: directory.path, environment: ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1"])
        let (_, created) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(created["id"] as? String)
        #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":1}"#).0 == 200)
        let (firstKeyStatus, firstKey) = try await runTool(admin, ["audit", "key", "--db", "data/photos.db"], in: directory.path)
        #expect(firstKeyStatus == 0)
        let (rotated, output) = try await runTool(admin, ["audit", "key", "--rotate", "--db", "data/photos.db"], in: directory.path)
        #expect(rotated == 0, "\(output)")
        let newKey = try #require(output.firstMatch(of: /new public key ([0-9a-f]{64})/).map { String($0.1) }, "\(output)")
        // photosd goes on: its next checkpoints (every second, and the last at shutdown) are signed by the new key.
        for photo in 2...3 {
            #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"back"}"#).0 == 200)
            #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":\#(photo)}"#).0 == 200)
            try await Task.sleep(for: .milliseconds(1_200))
        }
        #expect(daemon.stop() == 0)
        #expect(!daemon.log.contains("does not fit") && !daemon.log.contains("rotated at checkpoint"), "photosd refused to sign: \(daemon.log.suffix(2_000))")
        let connection = try Connection(path: directory.file("data/photos.db"), mode: .readOnly)
        let keys = try connection.query("SELECT public_key, next_public_key FROM audit_checkpoints ORDER BY number")
        connection.close()
        #expect(keys.contains { $0.optionalString(1) == newKey }, "no rotation checkpoint")
        #expect(keys.last?.optionalString(0) == newKey, "photosd's last checkpoint was not signed by the new key")
        #expect(keys.count { $0.optionalString(0) == newKey } >= 2, "photosd wrote no checkpoint with the new key while running")
        let (verified, report) = try await runTool(admin, ["audit", "verify", "--db", "data/photos.db", "--public-key", firstKey.trimmingCharacters(in: .whitespacesAndNewlines)], in: directory.path)
        #expect(verified == 0, "\(report)")
        #expect(report.contains("signing key rotated at checkpoint"), "\(report)")
    }
}
