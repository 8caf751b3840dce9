import Foundation
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
