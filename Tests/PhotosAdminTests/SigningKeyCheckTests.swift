import Foundation
import PhotosTestSupport
import Testing

/// `photos-admin check` says whether the signing key's file fits the database: a backup of the
/// key from before a rotation, restored with a newer database, passed `check` and then stopped
/// photosd's start.
@Suite("check: the signing key fits the database")
struct SigningKeyCheckTests {
    @Test("after a rotation, the old key restored: check fails naming the key; the rotated key fits; no key at all is said, not failed")
    func oldKeyRestored() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = ["--db", directory.file("photos.db")]
        let key = directory.file("audit-signing.key")
        func admin(_ arguments: [String]) async throws -> ProcessResult { try await AdminProcess.admin(arguments + db, in: directory.path) }
        #expect(try await admin(["migrate"]).status == 0)
        #expect(try await admin(["audit", "checkpoint"]).status == 0)
        let fits = try await admin(["check"])
        #expect(fits.status == 0 && fits.stdout.contains("signing key: fits"), "\(fits.output)")
        try FileManager.default.copyItem(atPath: key, toPath: directory.file("key-backup"))

        let rotated = try await admin(["audit", "key", "--rotate"])
        #expect(rotated.status == 0, "\(rotated.output)")
        #expect(try await admin(["check"]).status == 0)

        // The backup's key, from before the rotation, put back.
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.copyItem(atPath: directory.file("key-backup"), toPath: key)
        let misfit = try await admin(["check"])
        #expect(misfit.status != 0, "\(misfit.output)")
        #expect(misfit.stdout.contains("signing key: FAILED") && misfit.stdout.contains("before a rotation"), "\(misfit.output)")

        // No key file: said (photosd needs the key the checkpoints name), not a failure of the data.
        try FileManager.default.removeItem(atPath: key)
        let missing = try await admin(["check"])
        #expect(missing.stdout.contains("signing key: none at"), "\(missing.output)")
        #expect(!FileManager.default.fileExists(atPath: key), "check made a key")
    }
}
