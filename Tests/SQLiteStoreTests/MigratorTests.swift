import DatabaseAccess
import Foundation
import PhotosTestSupport
import SchemaMigrations
import SQLiteStore
import Testing

@Suite("Migrator")
struct MigratorTests {
    let first = Migration(version: 1, name: "0001_first.sql", sql: "CREATE TABLE a (id INTEGER PRIMARY KEY);\n")
    let second = Migration(version: 2, name: "0002_second.sql", sql: "CREATE TABLE b (id INTEGER PRIMARY KEY);\nINSERT INTO a DEFAULT VALUES;\n")

    @Test("a fresh database gets every migration; a second run is a no-op")
    func freshAndRerun() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = try Connection(path: directory.file("m.db"))
        defer { connection.close() }
        let migrator = Migrator(migrations: [second, first])
        #expect(try migrator.migrate(connection).map(\.version) == [1, 2])
        #expect(try migrator.migrate(connection).isEmpty)
        #expect(try connection.queryOne("SELECT count(*) FROM a")?.int(0) == 1)
        let rows = try connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version")
        #expect(try rows.map { try $0.string(1) } == ["0001_first.sql", "0002_second.sql"])
        #expect(try rows[0].string(2) == first.checksum)
        #expect(try migrator.status(connection).allSatisfy { $0.appliedAt != nil })
    }

    @Test("a migration that fails leaves neither its changes nor its bookkeeping row")
    func failingMigration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = try Connection(path: directory.file("m.db"))
        defer { connection.close() }
        let broken = Migration(version: 2, name: "0002_broken.sql", sql: "CREATE TABLE c (id INTEGER);\nCREATE TABLE c (id INTEGER);\n")
        #expect(throws: SQLiteError.self) { try Migrator(migrations: [first, broken]).migrate(connection) }
        #expect(try connection.queryOne("SELECT 1 FROM sqlite_schema WHERE name = 'c'") == nil)
        #expect(try connection.query("SELECT version FROM schema_migrations").map { try $0.int(0) } == [1])
    }

    @Test("an applied migration whose file changed is refused")
    func editedMigration() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = try Connection(path: directory.file("m.db"))
        defer { connection.close() }
        try Migrator(migrations: [first]).migrate(connection)
        let edited = Migration(version: 1, name: "0001_first.sql", sql: "CREATE TABLE a (id INTEGER PRIMARY KEY, extra TEXT);\n")
        do {
            try Migrator(migrations: [edited, second]).migrate(connection)
            Issue.record("expected a refusal")
        } catch let error as MigrationError {
            guard case .editedMigration(let name, _, _) = error else { return #expect(Bool(false), "\(error)") }
            #expect(name == "0001_first.sql")
            #expect(error.description.contains("0001_first.sql was changed after it was applied"))
        }
        #expect(try connection.queryOne("SELECT 1 FROM sqlite_schema WHERE name = 'b'") == nil)
    }

    @Test("a database newer than the binary is refused")
    func newerDatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = try Connection(path: directory.file("m.db"))
        defer { connection.close() }
        try Migrator(migrations: [first, second]).migrate(connection)
        #expect(throws: MigrationError.databaseNewer(databaseVersion: 2, binaryVersion: 1)) {
            try Migrator(migrations: [first]).migrate(connection)
        }
        #expect(MigrationError.databaseNewer(databaseVersion: 2, binaryVersion: 1).description
            == "database schema version 2 is newer than this binary (knows up to 1); use a newer photosd")
    }

    @Test("a file that is not a SQLite database is refused, unchanged")
    func notADatabase() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("notes.txt")
        let text = String(repeating: "this is not a database\n", count: 100)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        do {
            let connection = try Connection(path: path)
            defer { connection.close() }
            try Migrator(migrations: [first]).migrate(connection)
            Issue.record("expected a refusal")
        } catch let error as SQLiteError {
            #expect(error.primaryResultCode == 26)  // SQLITE_NOTADB, at open
            #expect(error.message.contains("not a database"))
        } catch let error as MigrationError {
            #expect(error == .notADatabase(path: path))
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
    }
}
