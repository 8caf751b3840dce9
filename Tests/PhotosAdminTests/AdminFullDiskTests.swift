import Foundation
import PhotosTestSupport
import Testing

@Suite("photos-admin on a full disk", .serialized)
struct AdminFullDiskTests {
    @Test(
        "importing a large file onto a full disk: one clear error line, nothing imported; the same import succeeds once there is room",
        .enabled(if: SmallDisk.canMount, "needs permission to mount a tmpfs (root on Linux)"))
    func importOnFullDisk() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let disk = try SmallDisk(at: directory.file("data"), megabytes: 2)
        defer { disk.unmount() }
        let db = ["--db", "data/photos.db"]
        await #expect(try AdminProcess.admin(["migrate"] + db, in: directory.path).status == 0)
        // ~4 MB of CSV (beside the disk, not on it): far more than 2 MB of database and WAL hold.
        let rows = 50_000
        var csv = "title,url,price\n"
        for index in 1...rows { csv += "Photo number \(index),https://photos.example.com/p/\(index).jpg,\(index % 90 + 1).25\n" }
        try csv.write(toFile: directory.file("big.csv"), atomically: true, encoding: .utf8)

        let failed = try await AdminProcess.admin(["photos", "import", "big.csv"] + db, in: directory.path)
        #expect(failed.status != 0)
        let lines = failed.stderr.split(separator: "\n").filter { !$0.isEmpty }
        #expect(lines.count == 1, "stderr: \(failed.stderr)")
        #expect(failed.stderr.contains("full"), "stderr: \(failed.stderr)")
        #expect(!failed.stderr.contains("INSERT"), "SQL text in an operator's error line: \(failed.stderr)")
        let listed = try await AdminProcess.admin(["photos", "list", "--format", "json"] + db, in: directory.path)
        #expect(listed.status == 0, "\(listed.stderr)")
        let page = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
        #expect((page?["photos"] as? [Any])?.isEmpty == true, "a failed import left photos behind")

        #expect(disk.grow(toMegabytes: 64))
        let imported = try await AdminProcess.admin(["photos", "import", "big.csv"] + db, in: directory.path)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("\(rows)"), "\(imported.stdout)")
        let check = try await AdminProcess.admin(["check"] + db, in: directory.path)
        #expect(check.status == 0, "\(check.output)")
    }
}
