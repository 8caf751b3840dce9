/// The SQL dialect of a store: which of the two sets of migrations it takes. Only the composition
/// root (opening a database, migrating it) looks at it; services ask for what differs between
/// the engines through the capabilities below, never by testing the dialect.
public enum SQLDialect: String, Sendable {
    /// SQLite: the embedded store.
    case sqlite
    /// PostgreSQL: the store several instances share.
    case postgres
}

/// One connection inside a transaction, as services see it: statements (`SQL`, each value bound
/// where it appears), awaited.
///
/// Service code is written once against this protocol. SQLite's `Connection` answers each
/// statement at once, on the writer's (or a reader's) own thread: the methods are `async`
/// requirements met by synchronous ones, and the transaction's closure runs on that thread
/// (the package builds with `NonisolatedNonsendingByDefault`, so an `async` function runs on
/// its caller's executor and awaiting one hops nowhere). PostgreSQL's sends each statement on a
/// pooled connection and suspends until its answer: no thread waits. Neither lets a closure
/// outlive its transaction: a connection is only valid inside the `DatabaseStore.write` or
/// `read` call that handed it out.
///
/// What differs between the engines is asked for by what it does (`hold(_:)`, `jsonText`,
/// `rowLockClause`, the catalogue), each store answering in its own SQL.
public protocol DatabaseConnection: AnyObject {

    /// Runs `sql` to completion and returns the number of rows changed.
    @discardableResult
    func execute(_ sql: SQL) async throws -> Int

    /// Runs a query and returns every row.
    func query(_ sql: SQL) async throws -> [Row]

    /// Runs several statements without parameters (a script: statements separated by `;`).
    func executeScript(_ sql: String) async throws

    /// Calls `body` for each row of a `SELECT` (or `WITH … SELECT`), one row at a time: SQLite
    /// steps the statement, PostgreSQL reads a cursor a page at a time, so a result of any size
    /// runs in flat memory. `body` may run other statements on this connection.
    func forEachRow(_ sql: SQL, _ body: (Row) async throws -> Void) async throws

    /// Runs a query and returns its first row, if any. A requirement (with a default) so that
    /// SQLite's connection, on the hot path, steps once instead of collecting an array.
    func queryOne(_ sql: SQL) async throws -> Row?

    // MARK: Capabilities: what each engine does in its own way

    /// Takes `locks`, in order, until the transaction ends (see `TransactionLock`). Call it in a
    /// write transaction only. SQLite takes nothing: its one writer already runs one write
    /// transaction at a time.
    func hold(_ locks: [TransactionLock]) async throws

    /// Holds every other writer of `tables` back until the transaction ends (readers go on):
    /// for a bulk fill (`photos-admin copy`). SQLite's single writer already does.
    func holdWriters(of tables: [String]) async throws

    /// After rows were inserted with explicit ids into `tables` (each with an integer identity
    /// column `id`), makes the next generated id follow the largest one. SQLite's rowids do so
    /// by themselves.
    func advanceIdentity(of tables: [String]) async throws

    /// An SQL expression for the text at `path` (object keys) inside the JSON text of
    /// `column`, NULL when absent. `column` and `path` are fixed names from the code, never input.
    func jsonText(_ column: String, path: [String]) -> SQL

    /// True when the database has a table named `name` (in the current schema, on PostgreSQL).
    func tableExists(_ name: String) async throws -> Bool

    /// The names of the database's own tables (the current schema on PostgreSQL; SQLite's
    /// internal `sqlite_…` tables left out), sorted.
    func tableNames() async throws -> [String]

    /// The columns of table `name`, in their declared order.
    func columnNames(of name: String) async throws -> [String]
}

extension DatabaseConnection {
    /// Runs a query and returns its first row, if any (the default: the first of all its rows).
    public func queryOne(_ sql: SQL) async throws -> Row? {
        try await query(sql).first
    }
}
