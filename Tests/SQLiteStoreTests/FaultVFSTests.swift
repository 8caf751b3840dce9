import DatabaseAccess
import Foundation
import PhotosTestSupport
import SQLiteStore
import Testing

/// The fault-injecting VFS itself: a power cut really loses what was not synced and really keeps
/// what was; injected failures reach SQLite with their codes; the counters count.
@Suite("Fault-injecting VFS")
struct FaultVFSTests {
    /// A table `items` in a WAL database opened through `vfs`.
    static func open(_ path: String, _ vfs: FaultVFS, synchronous: Connection.Synchronous = .full) throws -> Connection {
        let connection = try Connection(path: path, options: .init(synchronous: synchronous, vfs: vfs.name))
        try connection.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        return connection
    }

    /// The names in `items`, opened afterwards with the system's VFS (what a reboot finds).
    static func namesAfterReboot(_ path: String) throws -> [String] {
        let connection = try Connection(path: path)
        defer { connection.close() }
        #expect(try connection.queryOne("PRAGMA integrity_check")?.string(0) == "ok")
        return try connection.query("SELECT name FROM items ORDER BY id").map { try $0.string(0) }
    }

    @Test("a power cut loses the writes after the last sync and keeps the synced ones")
    func cutDropsUnsynced() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try FaultVFS()
        let path = directory.file("cut.db")
        let connection = try Self.open(path, vfs)
        try connection.execute("INSERT INTO items (name) VALUES ('synced')")
        let synced = vfs.statistics
        #expect(synced.syncs > 0 && synced.unsyncedWrites == 0, "synchronous=FULL syncs the WAL at each commit")
        // Committed but never synced: in the WAL, in the page cache, readable — not on disk.
        try connection.execute("PRAGMA synchronous = OFF")
        try connection.execute("INSERT INTO items (name) VALUES ('unsynced')")
        #expect(try connection.query("SELECT name FROM items").count == 2)
        #expect(vfs.statistics.unsyncedWrites > 0)
        vfs.powerCut(.drop, seed: 1)
        #expect(vfs.isOff)
        #expect(vfs.statistics.writesLost > 0)
        #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO items (name) VALUES ('after the cut')") }
        connection.close()
        vfs.unregister()
        #expect(try Self.namesAfterReboot(path) == ["synced"])
    }

    @Test("without a cut the same unsynced writes are all there (the test above is not vacuous)")
    func noCutKeepsEverything() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try FaultVFS()
        let path = directory.file("nocut.db")
        let connection = try Self.open(path, vfs)
        try connection.execute("INSERT INTO items (name) VALUES ('synced')")
        try connection.execute("PRAGMA synchronous = OFF")
        try connection.execute("INSERT INTO items (name) VALUES ('unsynced')")
        // The process dies without closing: the OS keeps its page cache.
        connection.close()
        vfs.unregister()
        #expect(try Self.namesAfterReboot(path) == ["synced", "unsynced"])
    }

    @Test("a torn cut keeps a prefix of the unsynced commits, differing with the seed, and the database stays intact")
    func tearKeepsPrefix() throws {
        var kept: Set<Int> = []
        for seed in UInt64(1)...12 {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let vfs = try FaultVFS()
            let path = directory.file("tear.db")
            let connection = try Self.open(path, vfs, synchronous: .normal)
            try connection.execute("PRAGMA wal_autocheckpoint = 0")
            try connection.execute("INSERT INTO items (name) VALUES ('base')")
            try connection.execute("PRAGMA wal_checkpoint(FULL)")
            let names = (1...40).map { "row-\($0)" }
            for name in names { try connection.execute("INSERT INTO items (name) VALUES (\(name))") }
            vfs.powerCut(.tear, seed: seed)
            connection.close()
            vfs.unregister()
            let found = try Self.namesAfterReboot(path)
            #expect(found.first == "base")
            let rest = Array(found.dropFirst())
            #expect(rest == Array(names.prefix(rest.count)), "seed \(seed): not a prefix of the commits")
            kept.insert(rest.count)
        }
        #expect(kept.count > 2, "the tear point never moved: \(kept)")
        #expect(kept.contains { $0 < 40 }, "a torn cut never lost anything")
    }

    @Test("an armed cut fires inside the chosen operation")
    func armedCut() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try FaultVFS()
        let path = directory.file("armed.db")
        let connection = try Self.open(path, vfs)
        try connection.execute("INSERT INTO items (name) VALUES ('first')")
        vfs.powerCut(afterOperations: 0, mode: .drop, seed: 3)
        #expect(!vfs.isOff)
        #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO items (name) VALUES ('second')") }
        #expect(vfs.isOff)
        connection.close()
        vfs.unregister()
        #expect(try Self.namesAfterReboot(path) == ["first"])
    }

    @Test("an injected write or sync failure reaches SQLite with its code, once or until cleared")
    func injectedFailures() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try FaultVFS()
        defer { vfs.unregister() }
        let connection = try Self.open(directory.file("fail.db"), vfs)
        defer { connection.close() }

        vfs.fail(.write, code: InjectedCode.full)
        let full = #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO items (name) VALUES ('a')") }
        #expect(full?.primaryResultCode == InjectedCode.full)
        try connection.rollbackIfOpen()
        try connection.execute("INSERT INTO items (name) VALUES ('b')")

        vfs.fail(.sync, code: InjectedCode.ioerrFsync, persistent: true)
        for _ in 0..<3 {
            let fsync = #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO items (name) VALUES ('c')") }
            #expect(fsync?.resultCode == InjectedCode.ioerrFsync)
            try connection.rollbackIfOpen()
        }
        vfs.clearFailures()
        try connection.execute("INSERT INTO items (name) VALUES ('d')")
        let statistics = vfs.statistics
        #expect(statistics.injectedFailures == 4)
        #expect(statistics.writes > 0 && statistics.bytesWritten >= 4096 && statistics.syncs > 0 && statistics.opens >= 2)
        #expect(try connection.query("SELECT name FROM items ORDER BY id").map { try $0.string(0) } == ["b", "d"])
    }
}
