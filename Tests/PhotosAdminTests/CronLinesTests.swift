import Foundation
import PhotosTestSupport
import Testing

/// The cron lines of docs/deploy.md (the backup) and docs/cli.md (the archive), run word for word
/// as cron runs them: the command field with cron's `\%` → `%`, by `/bin/sh -c`, in cron's
/// environment (`PATH=/usr/bin:/bin`, `HOME` the service user's, working directory `/`), against
/// the service's layout (`/usr/local/bin`, `/etc/photosd`, `/var/lib/photosd`,
/// `/var/backups/photosd`) bound from temporary directories in a mount namespace of the test's own.
/// (As root: the user field is not switched to.)
@Suite("The docs' cron lines, in cron's environment", .serialized)
struct CronLinesTests {
    /// The command field of each line of the ```cron blocks of `file`.
    static func cronCommands(in file: String) throws -> [String] {
        let text = try String(contentsOfFile: BuiltProducts.packageRoot + "/" + file, encoding: .utf8)
        var commands: [String] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                inBlock = trimmed == "```cron"
                continue
            }
            guard inBlock, !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            // m h dom mon dow user command (/etc/cron.d's form)
            if let match = trimmed.wholeMatch(of: /(?:\S+\s+){6}(.+)/) { commands.append(String(match.output.1)) }
        }
        return commands
    }

    @Test(
        "the backup line copies the service's database (its users in the copy), the archive line makes its directory and writes its archive; both exit 0 with nothing on stderr",
        .enabled(if: getuid() == 0, "needs root for a private mount namespace (unshare -m)"))
    func cronLines() async throws {
        let backup = try #require(try Self.cronCommands(in: "docs/deploy.md").first { $0.contains(" backup ") }, "docs/deploy.md has no backup cron line")
        let archive = try #require(try Self.cronCommands(in: "docs/cli.md").first { $0.contains("audit archive") }, "docs/cli.md has no archive cron line")

        let root = try TemporaryDirectory()
        defer { root.remove() }
        let layout = [
            "/usr/local/bin": root.file("bin"), "/etc/photosd": root.file("etc"), "/var/lib/photosd": root.file("state"),
            "/var/backups/photosd": root.file("backups"),
        ]
        for (mountPoint, directory) in layout {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(atPath: root.file("bin/photos-admin"), withDestinationPath: BuiltProducts.binDirectory + "/photos-admin")
        // The service's configuration, as docs/deploy.md says to write it.
        try Data("""
            {"database": {"path": "/var/lib/photosd/photos.db"}, "audit": {"signingKeyPath": "/var/lib/photosd/audit-signing.key"},
             "auth": {"secretKeyPath": "/var/lib/photosd/photosd-secret.key"}}
            """.utf8).write(to: URL(fileURLWithPath: root.file("etc/photosd.json")))
        // The service's database, with a user in it; and a stray one where cron's HOME would have led.
        let database = root.file("state/photos.db")
        #expect(try await AdminProcess.admin(["migrate", "--db", database], in: root.path).status == 0)
        let added = try await AdminProcess.admin(
            ["users", "add", "service-user", "--password-stdin", "--db", database], stdin: "long enough password", in: root.path,
            environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": root.file("state/audit-signing.key")])
        #expect(added.status == 0, "\(added.output)")

        func asCron(_ command: String) async throws -> ProcessResult {
            let mounts = layout.map { "mount --bind '\($0.value)' '\($0.key)'" }.joined(separator: " && ")
            // What cron does to the field: `\%` is a `%`; the rest goes to /bin/sh as it is.
            let field = command.replacingOccurrences(of: "\\%", with: "%")
            return try await runProcess(
                "/usr/bin/unshare",
                ["-m", "/bin/sh", "-c", "\(mounts) && cd / && exec env -i PATH=/usr/bin:/bin HOME=/var/lib/photosd SHELL=/bin/sh LOGNAME=photosd /bin/sh -c \"$1\"", "cron", field],
                in: "/")
        }

        let backedUp = try await asCron(backup)
        #expect(backedUp.status == 0 && backedUp.stderr.isEmpty, "\(backup): \(backedUp.output)")
        let copies = try FileManager.default.contentsOfDirectory(atPath: root.file("backups")).filter { $0.hasSuffix(".db") }
        #expect(copies.count == 1, "\(copies)")
        if let copy = copies.first {
            let listed = try await AdminProcess.admin(["users", "list", "--db", root.file("backups/" + copy)], in: root.path)
            #expect(listed.stdout.contains("service-user"), "the backup is not the service's database: \(listed.output)")
        }

        let archived = try await asCron(archive)
        #expect(archived.status == 0 && archived.stderr.isEmpty, "\(archive): \(archived.output)")
        let archives = (try? FileManager.default.contentsOfDirectory(atPath: root.file("state/archive"))) ?? []
        #expect(archives.count == 1 && archives.first?.hasSuffix(".sqlite") == true, "\(archives)")
        #expect(!FileManager.default.fileExists(atPath: "/data/photos.db") && !FileManager.default.fileExists(atPath: root.file("state/data")), "a stray database was made")
    }
}
