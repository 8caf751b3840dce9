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
        try setup.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        setup.close()
        let database = try SQLiteDatabase(path: path, readerCount: 1)
        defer { database.close() }
        for index in 0..<1_000 { try await database.write { try await $0.execute("INSERT INTO items (name) VALUES (\("n\(index)"))") } }
        let writer = Task {
            for index in 0..<300 { try await database.write { try await $0.execute("INSERT INTO items (name) VALUES (\("late\(index)"))") } }
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

    @Test("what a killed backup left (NAME.partial-PID and its journal, the PID gone) is removed by the next backup into that directory; a running backup's copy is not")
    func abandonedCopies() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = try Connection(path: directory.file("source.db"))
        defer { source.close() }
        try source.execute("CREATE TABLE t (x)")
        // A PID that runs no process: past the system's pid_max.
        let dead = (try? String(contentsOfFile: "/proc/sys/kernel/pid_max", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }.map { $0 + 1 } ?? 4_194_305
        let abandoned = ["old.db.partial-\(dead)", "old.db.partial-\(dead)-journal"]
        let running = "other.db.partial-\(getpid())"
        for name in abandoned + [running, "notes.partial-x"] {
            try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: directory.file(name)))
        }
        try source.backup(to: directory.file("new.db"))
        for name in abandoned { #expect(!FileManager.default.fileExists(atPath: directory.file(name)), "\(name) stayed") }
        #expect(FileManager.default.fileExists(atPath: directory.file(running)), "a live backup's copy was removed")
        #expect(FileManager.default.fileExists(atPath: directory.file("notes.partial-x")))
        #expect(FileManager.default.fileExists(atPath: directory.file("new.db")))
    }
}
