/// An open database, as services see it: write transactions and read snapshots.
///
/// Two implementations: `SQLiteDatabase` (one writer thread with group commit, a few readers)
/// and `PostgresStorage` (a pool of connections to a server several instances share). Each store
/// decides where a transaction's closure runs: SQLite's on the writer's (or a reader's) own
/// thread, as the executor of an actor, so that its statements — synchronous underneath — never
/// hop to another thread; PostgreSQL's wherever the awaiting task runs, suspended while the
/// server answers.
public protocol DatabaseStore: SessionActions, Sendable, CustomStringConvertible {
    /// The dialect of the store: for the composition root only (which migrations it takes).
    var dialect: SQLDialect { get }

    /// True when write transactions may run at the same time (PostgreSQL: several connections,
    /// several instances), so what one process holds in memory is not the whole truth and an id
    /// handed out may commit after a larger one; false when one writer runs them one after
    /// another (SQLite).
    var writersRunConcurrently: Bool { get }

    /// Runs `body` in a write transaction and returns its result once it is committed. If `body`
    /// throws, nothing it wrote is kept and the error is rethrown.
    func write<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T

    /// Runs `body` in one read-only snapshot and returns its result.
    func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T

    /// Finishes what is running and closes the connections; later calls fail.
    func close() async

    /// Runs `body` in one write transaction that holds the session `sessionID` against every
    /// other writer until it ends (SQLite: its one writer; PostgreSQL: the session's row
    /// locked), handing it the action contract on that transaction. A write there that is not
    /// `written` keeps nothing; what `body` returns is returned once the transaction ends.
    func withSessionLocked<T: Sendable>(_ sessionID: String, _ body: @escaping @Sendable (any SessionActions) async throws -> T) async throws -> T

    /// Deletes the idempotency answers stored at or before `cutoff`; returns how many.
    func pruneAnswers(storedAtOrBefore cutoff: String) async throws -> Int

    /// Removes from the store's files what deleted or overwritten rows of `tables` left behind,
    /// as far as it can while others keep using it (erasure's last step). SQLite zeroes freed
    /// content as it goes (`secure_delete`) and here checkpoints the WAL into the file and
    /// truncates it; PostgreSQL vacuums `tables`, so no dead row version keeps the old values.
    func purgeDeletedContent(tables: [String]) async throws
}

/// An error from a store, classified the same way for both, so services and the HTTP layer map
/// it to one `PhotosError` code whichever store raised it.
public protocol DatabaseFailure: Error {
    /// A UNIQUE or PRIMARY KEY violation.
    var isUniqueViolation: Bool { get }
    /// A failure that may pass by itself (a lock held too long, a full disk, a server that cannot
    /// be reached now): the request may be retried as it is.
    var isTransient: Bool { get }
    /// The storage itself failed (I/O, full disk, a lost server connection): the operator's tools
    /// say so in their own words, and nothing of the command was committed.
    var isStorageFailure: Bool { get }
    /// What failed in a few words, without SQL or values (e.g. "database or disk is full").
    var failureSummary: String { get }
    /// The store's code for it (e.g. "SQLite error 13", "SQLSTATE 53100").
    var failureCode: String { get }
    /// True when a statement refused on purpose because a fact it was written for no longer
    /// holds (PostgreSQL: `photosd_stale_facts`, SQLSTATE PD001): nothing of it was kept, and
    /// the caller decides again.
    var isStaleFactsRefusal: Bool { get }
}

extension DatabaseFailure {
    /// No store refuses so by default.
    public var isStaleFactsRefusal: Bool { false }
}

extension DatabaseStore {
    /// The store as OpenTelemetry's semantic conventions name it (`db.system.name` on a span):
    /// `sqlite` or `postgresql`. What a trace says; nothing decides on it.
    public var systemName: String {
        switch dialect {
        case .sqlite: "sqlite"
        case .postgres: "postgresql"
        }
    }
}
