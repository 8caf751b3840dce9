import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import SchemaMigrations
import Testing

@Suite("Embedded migrations")
struct EmbeddedMigrationsTests {
    static let migrationsDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Migrations").path

    @Test("the binary carries exactly the files in Migrations/sqlite and Migrations/postgres, byte for byte (run scripts/embed-migrations)", arguments: ["sqlite", "postgres"])
    func embeddedEqualFiles(dialect: String) throws {
        let directory = Self.migrationsDirectory + "/" + dialect
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }.sorted()
        let embedded = dialect == "sqlite" ? PhotosMigrations.sqlite : PhotosMigrations.postgres
        #expect(!files.isEmpty)
        #expect(embedded.map(\.name) == files)
        for migration in embedded {
            let text = try String(contentsOfFile: directory + "/" + migration.name, encoding: .utf8)
            #expect(migration.sql == text, "\(dialect)/\(migration.name) differs from its embedded copy")
            #expect(migration.version == Int(migration.name.prefix(while: \.isNumber)))
        }
    }

    @Test("the two dialects have the same numbers and names")
    func sameMigrationsInBothDialects() {
        #expect(PhotosMigrations.sqlite.map(\.name) == PhotosMigrations.postgres.map(\.name))
        #expect(PhotosMigrations.sqlite.map(\.version) == PhotosMigrations.postgres.map(\.version))
    }

    @Test("the schema has the audit_trail view with the contract's columns")
    func auditTrailView() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let columns = try await test.database.read { connection in
            try await connection.query("SELECT name FROM pragma_table_info('audit_trail')").map { try $0.string(0) }
        }
        #expect(columns == ["session_id", "seq", "at", "actor", "username", "coordinator", "step", "screen", "detail"])
    }
}
