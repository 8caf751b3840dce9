import Foundation
import PhotosTestSupport
import Testing

/// Databases written by earlier versions, with data in them, are migrated by today's binaries:
/// `Tests/Fixtures/upgrade/VERSION/` holds one made by that version's photosd and photos-admin
/// (`scripts/make-upgrade-fixture`): users, photos, a purchase, a flow experiment, an ended
/// session moved to an archive, an erased user, checkpoints, and a session stopped on the
/// sign-in screen of a purchase.
@Suite("Upgrades from earlier versions, with data")
struct UpgradeTests {
    static let fixtures = BuiltProducts.packageRoot + "/Tests/Fixtures/upgrade"

    struct Fixture: Decodable {
        struct MidFlow: Decodable {
            var id: String
            var secret: String
            var username: String
            var password: String
        }
        var version: String
        var commit: String
        var midFlowSession: MidFlow
    }

    static var versions: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixtures)) ?? []).sorted()
    }

    @Test("each earlier version's database: migrate, check and audit verify (with its archive) pass; the session stopped mid-purchase resumes on its screen and completes the purchase", arguments: versions)
    func upgrade(version: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = Self.fixtures + "/" + version
        for file in try FileManager.default.contentsOfDirectory(atPath: source) {
            try FileManager.default.copyItem(atPath: source + "/" + file, toPath: directory.file(file))
            // git keeps no 0600: the keys as an operator keeps them.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.file(file))
        }
        let fixture = try JSONDecoder().decode(Fixture.self, from: Data(contentsOf: URL(fileURLWithPath: directory.file("fixture.json"))))
        #expect(fixture.version == version)
        let admin = BuiltProducts.binDirectory + "/photos-admin"
        func run(_ arguments: [String]) async throws -> ProcessResult {
            try await runProcess(admin, arguments + ["--db", "photos.db"], in: directory.path)
        }
        let migrated = try await run(["migrate"])
        #expect(migrated.status == 0, "\(version): \(migrated.output)")
        let check = try await run(["check"])
        #expect(check.status == 0 && check.stdout.contains("signing key: fits"), "\(version): \(check.output)")
        let verify = try await run(["audit", "verify", "--archive", directory.file("archive-1.sqlite")])
        #expect(verify.status == 0, "\(version): \(verify.output)")
        #expect(verify.stdout.contains("archives: 1 archive verified"), "\(verify.output)")
        let users = try await run(["users", "list", "--format", "json"])
        #expect(users.stdout.contains("\"alice\"") && !users.stdout.contains("\"bob\""), "\(users.output)")

        // The session stopped mid-purchase goes on where it was (idle expiry off: the fixture is old).
        let daemon = try await Daemon(["--db", "photos.db"], in: directory.path, environment: ["PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "0"])
        let session = fixture.midFlowSession
        let auth = ["Authorization": "Session \(session.secret)"]
        let (status, state) = try await daemon.request("GET", "/v1/sessions/\(session.id)", headers: auth)
        #expect(status == 200, "\(version): \(state)")
        #expect((state["top"] as? [String: Any])?["screen"] as? String == "signIn", "\(version): \(state["top"] ?? "none")")
        let (submitted, afterSubmit) = try await daemon.request(
            "POST", "/v1/sessions/\(session.id)/actions",
            body: #"{"action":"submit","username":"\#(session.username)","password":"\#(session.password)"}"#, headers: auth)
        #expect(submitted == 200, "\(version): \(afterSubmit)")
        var outcome = afterSubmit["outcome"] as? String
        for _ in 0..<3 where outcome != "purchased" {
            let (_, answer) = try await daemon.request("POST", "/v1/sessions/\(session.id)/actions", body: #"{"action":"buy"}"#, headers: auth)
            outcome = answer["outcome"] as? String
        }
        #expect(outcome == "purchased", "\(version): the resumed purchase did not complete")
        #expect(daemon.stop() == 0)
        let after = try await run(["audit", "verify", "--archive", directory.file("archive-1.sqlite")])
        #expect(after.status == 0, "\(version): after serving: \(after.output)")
    }
}
