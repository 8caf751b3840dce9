import Foundation
import PhotosTestSupport
import Testing

/// photos-admin finds the service's configuration where the service keeps it: `--config`, else
/// `$PHOTOSD_CONFIG`, else `config/photosd.json` in the working directory, else
/// `/etc/photosd/photosd.json` — said when it is that last one, so that a cron line run from `/`
/// works on the service's database rather than on a stray `data/photos.db`.
@Suite("photos-admin finds the service's configuration")
struct ConfigDiscoveryTests {
    @Test(
        "from /, with nothing else to go by, photos-admin reads /etc/photosd/photosd.json (a private mount in this test) and says so; $PHOTOSD_CONFIG and config/photosd.json come first",
        .enabled(if: getuid() == 0, "needs root for a private mount namespace (unshare -m)"))
    func systemFile() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        // The service's layout: its configuration names its database by absolute path.
        let etc = root.file("etc-photosd")
        let state = root.file("var-lib-photosd")
        for directory in [etc, state] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let database = state + "/photos.db"
        try Data(#"{"database": {"path": "\#(database)"}, "audit": {"signingKeyPath": "\#(state)/audit-signing.key"}}"#.utf8)
            .write(to: URL(fileURLWithPath: etc + "/photosd.json"))
        let migrated = try await AdminProcess.admin(["migrate", "--db", database], in: root.path)
        #expect(migrated.status == 0, "\(migrated.output)")
        let added = try await AdminProcess.admin(["users", "add", "cron-user", "--password-stdin", "--db", database], stdin: "long enough password", in: root.path)
        #expect(added.status == 0, "\(added.output)")

        // /etc/photosd is this test's directory in a mount namespace of its own: nothing outside sees it.
        let madeMountPoints = try CronLinesTests.makeMountPoints(["/etc/photosd"])
        defer { CronLinesTests.removeMountPoints(madeMountPoints) }
        func inNamespace(_ line: String, environment: [String: String] = [:]) async throws -> ProcessResult {
            try await runProcess(
                "/usr/bin/unshare", ["-m", "/bin/sh", "-c", "mount --bind '\(etc)' /etc/photosd && cd / && \(line)"], in: "/",
                environment: environment)
        }
        let admin = BuiltProducts.binDirectory + "/photos-admin"
        let listed = try await inNamespace("\(admin) users list")
        #expect(listed.status == 0, "\(listed.output)")
        #expect(listed.stdout.contains("cron-user"), "not the service's database: \(listed.output)")
        #expect(listed.stderr.contains("using /etc/photosd/photosd.json"), "\(listed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "/data/photos.db"), "a stray database was made under /")

        // $PHOTOSD_CONFIG comes first (here: a file naming another database, which does not exist).
        let other = root.file("other.json")
        try Data(#"{"database": {"path": "\#(root.file("other.db"))"}}"#.utf8).write(to: URL(fileURLWithPath: other))
        let explicit = try await inNamespace("\(admin) users list", environment: ["PHOTOSD_CONFIG": other])
        #expect(explicit.status != 0 && explicit.output.contains("other.db") && !explicit.stderr.contains("using /etc"), "\(explicit.output)")

        let help = try await AdminProcess.admin(["--help"], in: root.path)
        #expect(help.stdout.contains("/etc/photosd/photosd.json"))
    }
}
