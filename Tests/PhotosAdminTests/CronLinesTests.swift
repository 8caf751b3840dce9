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
    /// Creates the directories of `paths` that do not exist yet (the mount points of the service's
    /// layout, on the host), returning those it created, deepest first: the test removes them
    /// again, so that the host is left as it was found.
    static func makeMountPoints(_ paths: [String]) throws -> [String] {
        var made: [String] = []
        for path in paths {
            var missing: [String] = []
            var current = path
            while !current.isEmpty, current != "/", !FileManager.default.fileExists(atPath: current) {
                missing.append(current)
                current = (current as NSString).deletingLastPathComponent
            }
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            made += missing
        }
        return made.sorted { $0.count > $1.count }
    }

    /// Removes the (empty) directories `makeMountPoints` made; a test fails when one stays.
    static func removeMountPoints(_ made: [String]) {
        for path in made { rmdir(path) }
        let left = made.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(left.isEmpty, "the test left these on the host: \(left)")
    }

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
        for directory in layout.values { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let madeMountPoints = try Self.makeMountPoints(Array(layout.keys))
        defer { Self.removeMountPoints(madeMountPoints) }
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
    @Test(
        "on PostgreSQL with TLS and a password, the password only in the file the configuration names: the archive cron line and the documented key rotation run in cron's environment",
        .enabled(if: getuid() == 0, "needs root for a private mount namespace (unshare -m)"))
    func postgresPasswordFile() async throws {
        let archive = try #require(try Self.cronCommands(in: "docs/cli.md").first { $0.contains("audit archive") }, "docs/cli.md has no archive cron line")
        let deploy = try String(contentsOfFile: BuiltProducts.packageRoot + "/docs/deploy.md", encoding: .utf8)
        let rotation = try #require(deploy.firstMatch(of: /`(sudo -u photosd photos-admin audit key --rotate[^`]*)`/).map { String($0.1) }, "docs/deploy.md has no rotation line")
        let postgres = try String(contentsOfFile: BuiltProducts.packageRoot + "/docs/postgres.md", encoding: .utf8)
        #expect(postgres.contains(#""passwordFile": "/etc/photosd/db-password""#), "docs/postgres.md says where photos-admin finds the password")

        let cluster = try TemporaryDirectory()
        let script = BuiltProducts.packageRoot + "/scripts/postgres-test-server"
        let started = try await runProcess(script, ["start", cluster.path, "--tls"], in: cluster.path)
        try #require(started.status == 0, "\(started.output)")
        defer { _ = try? runProcessBlocking(script, ["stop", cluster.path], in: "/") }
        let url = started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)

        let root = try TemporaryDirectory()
        defer { root.remove() }
        let layout = ["/usr/local/bin": root.file("bin"), "/etc/photosd": root.file("etc"), "/var/lib/photosd": root.file("state")]
        for directory in layout.values { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let madeMountPoints = try Self.makeMountPoints(Array(layout.keys))
        defer { Self.removeMountPoints(madeMountPoints) }
        try FileManager.default.createSymbolicLink(atPath: root.file("bin/photos-admin"), withDestinationPath: BuiltProducts.binDirectory + "/photos-admin")
        try FileManager.default.copyItem(atPath: cluster.file("ca.crt"), toPath: root.file("etc/db-ca.pem"))
        try FileManager.default.copyItem(atPath: cluster.file("password"), toPath: root.file("etc/db-password"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: root.file("etc/db-password"))
        // The configuration as docs/postgres.md says to write it: the URL without the password.
        try Data("""
            {"database": {"path": "\(url)", "sslMode": "verify-full", "sslRootCert": "/etc/photosd/db-ca.pem", "passwordFile": "/etc/photosd/db-password"},
             "audit": {"signingKeyPath": "/var/lib/photosd/audit-signing.key"}, "auth": {"secretKeyPath": "/var/lib/photosd/photosd-secret.key"}}
            """.utf8).write(to: URL(fileURLWithPath: root.file("etc/photosd.json")))

        func asCron(_ command: String, path: String = "/usr/bin:/bin") async throws -> ProcessResult {
            let mounts = layout.map { "mount --bind '\($0.value)' '\($0.key)'" }.joined(separator: " && ")
            let field = command.replacingOccurrences(of: "\\%", with: "%")
            return try await runProcess(
                "/usr/bin/unshare",
                ["-m", "/bin/sh", "-c", "\(mounts) && cd / && exec env -i PATH=\(path) HOME=/var/lib/photosd SHELL=/bin/sh LOGNAME=photosd /bin/sh -c \"$1\"", "cron", field],
                in: "/")
        }
        let migrated = try await asCron("/usr/local/bin/photos-admin --config /etc/photosd/photosd.json migrate")
        #expect(migrated.status == 0, "\(migrated.output)")
        let archived = try await asCron(archive)
        #expect(archived.status == 0 && archived.stderr.isEmpty, "\(archive): \(archived.output)")
        // The operator's shell has /usr/local/bin on its PATH; the test is root, so no user switch.
        let rotated = try await asCron(rotation.replacingOccurrences(of: "sudo -u photosd ", with: ""), path: "/usr/local/bin:/usr/bin:/bin")
        #expect(rotated.status == 0, "\(rotation): \(rotated.output)")
        #expect(FileManager.default.fileExists(atPath: root.file("state/audit-signing.key.history")))
        let password = try String(contentsOfFile: cluster.file("password"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        for output in [migrated.output, archived.output, rotated.output] { #expect(!output.contains(password)) }
    }
}
