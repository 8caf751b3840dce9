import CSQLite
import DatabaseAccess
import Foundation

/// A database file served by one writer (with group commit) and a few readers.
public final class SQLiteDatabase: DatabaseStore, GroupCommitStore, FileBackupStore {
    /// The database file.
    public let path: String
    /// The single writer.
    public let writer: DatabaseWriter
    /// The read-only connections.
    public let readers: DatabaseReaders
    /// What every connection was opened with.
    let options: Connection.Options

    /// Opens the database: migrations must already have run (see `Migrator`).
    public init(path: String, options: Connection.Options = .init(), readerCount: Int = 4, maxBatchSize: Int = 64) throws {
        self.path = path
        self.options = options
        self.writer = try DatabaseWriter(path: path, options: options, maxBatchSize: maxBatchSize)
        self.readers = try DatabaseReaders(path: path, count: readerCount, options: options)
    }

    /// SQLite's dialect.
    public var dialect: SQLDialect { .sqlite }

    /// One writer runs the write transactions one after another.
    public var writersRunConcurrently: Bool { false }

    /// The file, as logs and errors name the database.
    public var description: String { path }

    /// Runs `body` in the writer's transaction (see `DatabaseWriter.write`).
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await writer.write { connection in try await body(connection) }
    }

    /// Runs `body` on a reader in one snapshot (see `DatabaseReaders.read`).
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await readers.read { connection in try await body(connection) }
    }

    /// What the writer has done so far (for metrics and benchmarks).
    public var writerStatistics: GroupCommitStatistics { writer.stats }

    /// Copies the database to a new file at `path` with SQLite's online backup, from one read
    /// snapshot (safe while the writer writes).
    public func backup(to path: String) async throws {
        try await readers.read { connection in
            // Reading first opens the read transaction: every page comes from the same snapshot.
            _ = try connection.query("SELECT count(*) FROM sqlite_schema")
            try connection.backup(to: path)
        }
    }

    /// Checkpoints the WAL into the file and truncates it to nothing, on a connection of its own
    /// (a checkpoint cannot run inside the writer's transactions) and a thread of its own (it
    /// waits for readers on older snapshots, up to the busy timeout each try). Deleted content
    /// was zeroed as it was freed (`secure_delete`, every read-write connection), so after this
    /// the file holds no copy of it and the WAL holds nothing. Other processes (photosd) may keep
    /// writing meanwhile; their frames come after.
    public func purgeDeletedContent(tables: [String]) async throws {
        let path = self.path
        let options = self.options
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                continuation.resume(with: Result { try Self.truncateWAL(path: path, options: options) })
            }
            thread.name = "sqlite-purge"
            thread.start()
        }
    }

    private static func truncateWAL(path: String, options: Connection.Options) throws {
        let connection = try Connection(path: path, mode: .readWrite, options: options)
        defer { connection.close() }
        // With incremental auto-vacuum (every file made since migration 0013's release), give
        // the free pages back to the file system, a thousand at a time so that the writer waits
        // for one short step at most.
        if try connection.queryOne("PRAGMA auto_vacuum")?.int("auto_vacuum") == 2 {
            var free = try connection.queryOne("PRAGMA freelist_count")?.int("freelist_count") ?? 0
            while free > 0 {
                _ = try connection.query("PRAGMA incremental_vacuum(1000)")
                let left = try connection.queryOne("PRAGMA freelist_count")?.int("freelist_count") ?? 0
                if left >= free { break }  // another writer frees pages as fast: leave them to it
                free = left
            }
        }
        // A reader that stays on an older snapshot makes the checkpoint report busy: try again
        // a few times before saying so.
        for attempt in 1...20 {
            let result = try connection.queryOne("PRAGMA wal_checkpoint(TRUNCATE)")
            if try result?.int("busy") == 0 { return }
            if attempt < 20 { usleep(100_000) }
        }
        throw SQLiteError(resultCode: SQLITE_BUSY, message: "the WAL of \(path) could not be truncated: readers kept older snapshots open")
    }

    /// Closes the readers, then the writer (which checkpoints the WAL first), suspending while
    /// they finish what is running: no thread of the cooperative pool is held (photosd's
    /// shutdown, every `DatabaseStore.close()`).
    public func close() async {
        await readers.close()
        await writer.close()
    }

    /// The same, blocking the caller: for callers that cannot await (a test's `defer`).
    public func close() {
        readers.close()
        writer.close()
    }
}
