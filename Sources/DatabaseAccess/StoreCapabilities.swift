/// A store that copies itself to a new file from one consistent snapshot while it is in use
/// (SQLite's online backup). PostgreSQL has its own tools for that (`pg_dump`).
public protocol FileBackupStore: DatabaseStore {
    /// Writes a copy of the whole database to a new file at `path`.
    func backup(to path: String) async throws
}

/// What a store with a single writer tells about its group commit, for `/metrics`.
public struct GroupCommitStatistics: Sendable {
    /// Transactions committed.
    public var commits: Int
    /// Requests committed (a request rolled back to its savepoint is not counted).
    public var requests: Int
    /// Largest number of requests committed together so far.
    public var largestBatch: Int
    /// Times the writer's connection was closed and opened again after an I/O failure.
    public var reopens: Int

    /// Creates the figures.
    public init(commits: Int, requests: Int, largestBatch: Int, reopens: Int) {
        self.commits = commits
        self.requests = requests
        self.largestBatch = largestBatch
        self.reopens = reopens
    }
}

/// A store whose writes go through one writer that groups them (SQLite).
public protocol GroupCommitStore: DatabaseStore {
    /// The writer's figures so far.
    var writerStatistics: GroupCommitStatistics { get }
}

/// A statement prepared once and run again and again with new values bound, each run with no
/// round trip (SQLite): for inserting many rows bound straight from bytes.
public protocol ReusableStatement: AnyObject {
    /// Binds text from bytes valid only during the call, at 1-based `index`.
    func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) throws
    /// Binds text at 1-based `index`.
    func bindText(_ text: String, at index: Int32) throws
    /// Binds an integer at 1-based `index`.
    func bindInt(_ value: Int64, at index: Int32) throws
    /// Runs the statement with what is bound (no rows expected).
    func run() throws
}

/// A connection whose statements cost no round trip, so that a bulk insert runs one reusable
/// statement per row instead of gathering rows into large statements.
public protocol ReusableStatementConnection: DatabaseConnection {
    /// Prepares `sql` (its values `\(unbound:)`, bound by position at each run) for repeated
    /// runs in this transaction.
    func prepareReusable(_ sql: SQL) throws -> any ReusableStatement
}
