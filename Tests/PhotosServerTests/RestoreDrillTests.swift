import Foundation
import PhotosTestSupport
import PhotosdProcess
import Testing

/// docs/deploy.md's restore lines (the first `sh` block under "Backup and restore"), run as
/// written — but for the service manager, the photosd user and the directory — in the states
/// where an operator needs them: over a photosd killed with its WAL present, and after a key
/// rotation.
@Suite("Restore drills: the documented lines after a crash and after a rotation", .serialized)
struct RestoreDrillTests {
    static var admin: String { Daemon.binDirectory + "/photos-admin" }

    /// The restore lines, made runnable here: `/var/lib/photosd` is `target`, photos-admin the
    /// built one; `systemctl` and the photosd user are left out (no service manager in a test).
    static func restoreLines(target: String) throws -> String {
        let page = try String(contentsOfFile: BuiltProducts.packageRoot + "/docs/deploy.md", encoding: .utf8)
        let section = try #require(page.range(of: "\n## Backup and restore\n"))
        let rest = page[section.upperBound...]
        let open = try #require(rest.range(of: "\n```sh\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```\n"))
        let lines = rest[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("rm -f /var/lib/photosd/photos.db-wal") }, "the lines remove the old WAL: \(lines)")
        return lines.filter { !$0.hasPrefix("systemctl ") }.map { line in
            line.replacingOccurrences(of: "install -d -o photosd ", with: "install -d ")
                .replacingOccurrences(of: "chown photosd: /var/lib/photosd/* && ", with: "")
                .replacingOccurrences(of: "sudo -u photosd photos-admin", with: "\"$ADMIN\"")
                .replacingOccurrences(of: "/var/lib/photosd", with: target)
        }.joined(separator: "\n")
    }

    /// Runs the restore lines in `backups` (which holds `photos-2026-11-26.db` and the keys).
    static func restore(from backups: String, to target: String) async throws -> (Int32, String) {
        let script = try restoreLines(target: target)
        let result = try await runProcess("/bin/bash", ["-euo", "pipefail", "-c", "ADMIN=\(admin)\n" + script], in: backups)
        return (result.status, result.output)
    }

    @Test("after a crash with the WAL present: the restore lines remove it, check passes, photosd serves the restored session")
    func afterCrash() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let target = directory.file("lib")
        let backups = directory.file("backups")
        for path in [target, backups] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        // No checkpoint in this drill: the crash's lost rows are not what it is about ("The signed tree head" is).
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "86399", "PHOTOSD_AUDIT_CHECKPOINT_MAX_AGE_SECONDS": "86400"]
        let daemon = try await Daemon(["--seed-demo", "--db", target + "/photos.db"], in: directory.path, environment: environment)
        let (_, session) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(session["id"] as? String)
        #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":2}"#).0 == 200)
        let backup = try await runTool(Self.admin, ["backup", "--db", target + "/photos.db", backups + "/photos-2026-11-26.db"], in: directory.path)
        #expect(backup.0 == 0, "\(backup.1)")
        for key in ["audit-signing.key", "photosd-secret.key"] {
            try FileManager.default.copyItem(atPath: target + "/" + key, toPath: backups + "/" + key)
        }
        // Work after the backup, then the crash: its pages are in the WAL only.
        var later = ""
        for _ in 0..<30 {
            let (_, other) = try await daemon.request("POST", "/v1/sessions")
            later = try #require(other["id"] as? String)
            _ = try await daemon.request("POST", "/v1/sessions/\(later)/actions", body: #"{"action":"selectPhoto","photoId":1}"#)
        }
        _ = daemon.stop(signal: SIGKILL)
        let wal = try FileManager.default.attributesOfItem(atPath: target + "/photos.db-wal")[.size] as? Int ?? 0
        #expect(wal > 0, "the crash left a WAL with pages in it")

        let restored = try await Self.restore(from: backups, to: target)
        #expect(restored.0 == 0, "check passes on the restored file: \(restored.1)")
        let again = try await Daemon(["--db", target + "/photos.db"], in: directory.path, environment: environment)
        defer { _ = again.stop() }
        let (status, resumed) = try await again.request("GET", "/v1/sessions/\(id)")
        #expect(status == 200, "\(resumed)")
        // The backup's state, not the crashed database's: an old WAL left beside the restored
        // file is replayed onto it (the restore silently undone, or a malformed image).
        let (gone, body) = try await again.request("GET", "/v1/sessions/\(later)")
        #expect(gone == 401, "a session made after the backup is not in the restored database (unknown: 401, as a wrong secret): \(gone) \(body)")
    }

    @Test("after a key rotation: the restore lines bring the key's history, check passes (no false tampering alarm), photosd serves")
    func afterRotation() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let live = directory.file("live")
        let target = directory.file("lib")
        let backups = directory.file("backups")
        for path in [live, backups] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1"]
        let daemon = try await Daemon(["--seed-demo", "--db", live + "/photos.db"], in: directory.path, environment: environment)
        let (_, session) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(session["id"] as? String)
        #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":2}"#).0 == 200)
        let rotate = try await runTool(Self.admin, ["audit", "key", "--rotate", "--db", live + "/photos.db"], in: directory.path)
        #expect(rotate.0 == 0, "\(rotate.1)")
        #expect(FileManager.default.fileExists(atPath: live + "/audit-signing.key.history"))
        #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"buy"}"#).0 == 200)
        try await Task.sleep(for: .seconds(2))
        let backup = try await runTool(Self.admin, ["backup", "--db", live + "/photos.db", backups + "/photos-2026-11-26.db"], in: directory.path)
        #expect(backup.0 == 0, "\(backup.1)")
        for key in ["audit-signing.key", "audit-signing.key.history", "photosd-secret.key"] {
            try FileManager.default.copyItem(atPath: live + "/" + key, toPath: backups + "/" + key)
        }
        #expect(daemon.stop() == 0)

        let restored = try await Self.restore(from: backups, to: target)
        #expect(restored.0 == 0, "\(restored.1)")
        let mode = try FileManager.default.attributesOfItem(atPath: target + "/audit-signing.key.history")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let again = try await Daemon(["--db", target + "/photos.db"], in: directory.path, environment: environment)
        defer { _ = again.stop() }
        let (status, resumed) = try await again.request("GET", "/v1/sessions/\(id)")
        #expect(status == 200, "\(resumed)")
    }
}
