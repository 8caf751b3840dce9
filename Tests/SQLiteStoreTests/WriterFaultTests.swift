import DatabaseAccess
import Foundation
import PhotosTestSupport
import SQLiteStore
import Synchronization
import Testing

/// The group-commit writer over failing storage (the fault-injecting VFS): nothing that failed is
/// acknowledged or kept, the writer does not trust its connection after an I/O failure, and it
/// serves again as soon as the storage does.
@Suite("DatabaseWriter on failing storage")
struct WriterFaultTests {
    /// A database with table `items`, every connection through `vfs`.
    static func makeDatabase(_ directory: TemporaryDirectory, _ vfs: FaultVFS) throws -> SQLiteDatabase {
        let path = directory.file("faults.db")
        let options = Connection.Options(synchronous: .full, vfs: vfs.name)
        let setup = try Connection(path: path, options: options)
        try setup.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        setup.close()
        return try SQLiteDatabase(path: path, options: options, readerCount: 1, maxBatchSize: 64)
    }

    static func insert(_ database: SQLiteDatabase, _ name: String) async throws {
        try await database.write { try await $0.execute("INSERT INTO items (name) VALUES (\(name))") }
    }

    static func names(_ database: SQLiteDatabase) async throws -> [String] {
        try await database.read { try await $0.query("SELECT name FROM items ORDER BY id").map { try $0.string(0) } }
    }

    /// The names a fresh open with the system's VFS finds (recovery from the WAL included).
    static func namesAfterReopen(_ path: String) throws -> [String] {
        let connection = try Connection(path: path)
        defer { connection.close() }
        #expect(try connection.queryOne("PRAGMA integrity_check")?.string(0) == "ok")
        return try connection.query("SELECT name FROM items ORDER BY id").map { try $0.string(0) }
    }

    /// Runs `count` inserts that the writer takes as one batch: they queue while a first request
    /// holds the writer, then commit together. Returns each request's error, or nil.
    static func batch(_ database: SQLiteDatabase, count: Int, beforeRelease: @Sendable () -> Void) async throws -> [(any Error)?] {
        let gate = DispatchSemaphore(value: 0)
        let started = Atomic(false)
        // Blocking the writer's own thread (not a cooperative one) holds the writer.
        let holding = Task { try await database.write { _ in started.store(true, ordering: .releasing); gate.wait() } }
        while !started.load(ordering: .acquiring) { try await Task.sleep(for: .milliseconds(5)) }
        let requests = (0..<count).map { index in
            Task { () -> (any Error)? in
                do {
                    try await insert(database, "batch-\(index)")
                    return nil
                } catch {
                    return error
                }
            }
        }
        // Every request queued behind the held one (not a guessed sleep: CI machines are busy).
        while database.writer.queuedRequests < count { try await Task.sleep(for: .milliseconds(5)) }
        beforeRelease()
        gate.signal()
        try await holding.value
        var errors: [(any Error)?] = []
        for request in requests { errors.append(await request.value) }
        return errors
    }

    @Test("a failing fsync is never acknowledged; the writer opens a new connection before its next transaction")
    func failingSync() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try FaultVFS()
        defer { vfs.unregister() }
        let database = try Self.makeDatabase(directory, vfs)
        defer { database.close() }
        try await Self.insert(database, "before")
        let opensBefore = vfs.statistics.opens

        vfs.fail(.sync, code: InjectedCode.ioerrFsync)
        let error = await #expect(throws: SQLiteError.self) { try await Self.insert(database, "failed-sync") }
        #expect(error?.resultCode == InjectedCode.ioerrFsync)
        #expect(error?.isTransient == true, "a failed fsync is a 503, not a 500")
        #expect(database.writer.stats.reopens == 0, "reopened before anything asked for it")

        try await Self.insert(database, "after")
        #expect(database.writer.stats.reopens == 1)
        #expect(vfs.statistics.opens > opensBefore, "the next transaction did not open a new connection")
        // The unacknowledged commit is not what readers see; the next commit took its place.
        #expect(try await Self.names(database) == ["before", "after"])
    }

    @Test("a failing write in the middle of a batch fails every request of it; nothing of it stays; the next write succeeds")
    func failingWriteMidBatch() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try FaultVFS()
        let database = try Self.makeDatabase(directory, vfs)
        try await Self.insert(database, "before")
        let errors = try await Self.batch(database, count: 20) {
            // The batch's COMMIT writes its WAL frames; the second of them fails.
            vfs.fail(.write, after: 1, code: InjectedCode.ioerrWrite)
        }
        // One failed write, twenty failed requests: they were one batch, and it failed whole.
        #expect(vfs.statistics.injectedFailures == 1)
        #expect(errors.count == 20)
        for error in errors {
            #expect((error as? SQLiteError)?.resultCode == InjectedCode.ioerrWrite, "\(String(describing: error))")
        }
        #expect(try await Self.names(database) == ["before"])
        try await Self.insert(database, "after")
        #expect(database.writer.stats.reopens == 1)
        #expect(try await Self.names(database) == ["before", "after"])
        await database.close()
        vfs.unregister()
        // Not after recovery from the WAL either: the batch never wrote its commit frame.
        #expect(try Self.namesAfterReopen(directory.file("faults.db")) == ["before", "after"])
    }

    @Test("a full disk fails every write while it lasts; the writer serves again when space comes back, without a restart")
    func fullDiskUntilCleared() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try FaultVFS()
        let database = try Self.makeDatabase(directory, vfs)
        try await Self.insert(database, "before")
        let errors = try await Self.batch(database, count: 10) {
            vfs.fail(.write, code: InjectedCode.full, persistent: true)
        }
        #expect(errors.allSatisfy { ($0 as? SQLiteError)?.primaryResultCode == InjectedCode.full })
        for attempt in 0..<5 {
            let error = await #expect(throws: SQLiteError.self) { try await Self.insert(database, "refused-\(attempt)") }
            #expect(error?.primaryResultCode == InjectedCode.full)
        }
        vfs.clearFailures()
        try await Self.insert(database, "after")
        #expect(try await Self.names(database) == ["before", "after"])
        await database.close()
        vfs.unregister()
        #expect(try Self.namesAfterReopen(directory.file("faults.db")) == ["before", "after"])
    }
}
