import Foundation
import PhotosCore
import PhotosTestSupport
import Testing

@Suite("Embedded migrations")
struct EmbeddedMigrationsTests {
    static let migrationsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations").path

    @Test("the binary carries exactly the files in Migrations/, byte for byte (run scripts/embed-migrations)")
    func embeddedEqualFiles() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.migrationsDirectory)
            .filter { $0.hasSuffix(".sql") }.sorted()
        #expect(!files.isEmpty)
        #expect(PhotosMigrations.all.map(\.name) == files)
        for migration in PhotosMigrations.all {
            let text = try String(contentsOfFile: Self.migrationsDirectory + "/" + migration.name, encoding: .utf8)
            #expect(migration.sql == text, "\(migration.name) differs from its embedded copy")
            #expect(migration.version == Int(migration.name.prefix(while: \.isNumber)))
        }
    }

    @Test("the schema has the audit_trail view with the contract's columns")
    func auditTrailView() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let columns = try await test.database.read { connection in
            try connection.query("SELECT name FROM pragma_table_info('audit_trail')").map { $0.string(0) }
        }
        #expect(columns == ["session_id", "seq", "at", "actor", "username", "coordinator", "step", "screen", "detail"])
    }
}
