import DatabaseAccess
import Foundation
import PhotosTestSupport
import SQLiteStore
import Testing

@Suite("Backup")
struct BackupTests {
    @Test("backup copies a consistent database while writes go on, and never overwrites")
    func backupWhileWriting() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("source.db")
        let setup = try Connection(path: path)
        try await setup.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        setup.close()
        let database = try SQLiteDatabase(path: path, readerCount: 1)
        defer { database.close() }
        for index in 0..<1_000 { try await database.write { try await $0.execute("INSERT INTO items (name) VALUES (?)", "n\(index)") } }
        let writer = Task {
            for index in 0..<300 { try await database.write { try await $0.execute("INSERT INTO items (name) VALUES (?)", "late\(index)") } }
        }
        let target = directory.file("copy.db")
        let copied = try await database.readers.read { connection in
            let count = try connection.queryOne("SELECT count(*) FROM items")?.int(0) ?? 0
            try connection.backup(to: target)
            return count
        }
        try await writer.value
        let copy = try Connection(path: target, mode: .readOnly)
        defer { copy.close() }
        await #expect(try copy.queryOne("PRAGMA integrity_check")?.string(0) == "ok")
        await #expect(try copy.queryOne("SELECT count(*) FROM items")?.int(0) == copied)
        await #expect(throws: SQLiteError.self) {
            try await database.readers.read { try $0.backup(to: target) }
        }
    }
}
