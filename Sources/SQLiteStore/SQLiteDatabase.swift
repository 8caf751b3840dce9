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

    /// Opens the database: migrations must already have run (see `Migrator`).
    public init(path: String, options: Connection.Options = .init(), readerCount: Int = 4, maxBatchSize: Int = 64) throws {
        self.path = path
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
