/// The SQL dialect a connection speaks, for the few statements that differ between the stores.
public enum SQLDialect: String, Sendable {
    /// SQLite: the embedded store.
    case sqlite
    /// PostgreSQL: the store several instances share.
    case postgres
}

/// One connection inside a transaction, as services see it: statements with `?` placeholders
/// and bound values, run synchronously.
///
/// Service code is written once against this protocol. SQLite's `Connection` runs each statement
/// on the writer's (or a reader's) own thread; PostgreSQL's runs it on a pooled connection from a
/// thread where waiting is allowed. Neither lets a closure outlive its transaction: a connection
/// is only valid inside the `DatabaseStore.write` or `read` call that handed it out.
public protocol DatabaseConnection: AnyObject {
    /// The dialect, for the statements that must differ (row locks, JSON access, catalogue).
    var dialect: SQLDialect { get }

    /// Runs `sql` with `arguments` bound, to completion, and returns the number of rows changed.
    @discardableResult
    func execute(_ sql: String, arguments: [any DatabaseBindable]) throws -> Int

    /// Runs a query and returns every row.
    func query(_ sql: String, arguments: [any DatabaseBindable]) throws -> [Row]

    /// Runs several statements without parameters (a script: statements separated by `;`).
    func executeScript(_ sql: String) throws

    /// Calls `body` for each row of a `SELECT` (or `WITH … SELECT`), one row at a time: SQLite
    /// steps the statement, PostgreSQL reads a cursor a page at a time, so a result of any size
    /// runs in flat memory. `body` may run other statements on this connection.
    func forEachRow(_ sql: String, arguments: [any DatabaseBindable], _ body: (Row) throws -> Void) throws

    /// Runs a query and returns its first row, if any. A requirement (with a default) so that
    /// SQLite's connection, on the hot path, steps once instead of collecting an array.
    func queryOne(_ sql: String, arguments: [any DatabaseBindable]) throws -> Row?
}

extension DatabaseConnection {
    /// Runs `sql` with `arguments` bound, to completion, and returns the number of rows changed.
    @discardableResult
    public func execute(_ sql: String, _ arguments: any DatabaseBindable...) throws -> Int {
        try execute(sql, arguments: arguments)
    }

    /// Runs a query and returns every row.
    public func query(_ sql: String, _ arguments: any DatabaseBindable...) throws -> [Row] {
        try query(sql, arguments: arguments)
    }

    /// Runs a query and returns its first row, if any.
    public func queryOne(_ sql: String, _ arguments: any DatabaseBindable...) throws -> Row? {
        try queryOne(sql, arguments: arguments)
    }

    /// Runs a query and returns its first row, if any (the default: the first of all its rows).
    public func queryOne(_ sql: String, arguments: [any DatabaseBindable]) throws -> Row? {
        try query(sql, arguments: arguments).first
    }

    /// Calls `body` for each row of a query without parameters.
    public func forEachRow(_ sql: String, _ body: (Row) throws -> Void) throws {
        try forEachRow(sql, arguments: [], body)
    }
}

extension DatabaseConnection {
    /// True when the database has a table named `name` (in the current schema, on PostgreSQL).
    public func tableExists(_ name: String) throws -> Bool {
        switch dialect {
        case .sqlite: try queryOne("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", name) != nil
        case .postgres: try queryOne("SELECT 1 WHERE to_regclass(?) IS NOT NULL", name) != nil
        }
    }

    /// The names of the database's own tables (the current schema on PostgreSQL; SQLite's
    /// internal `sqlite_…` tables left out), sorted.
    public func tableNames() throws -> [String] {
        let sql = switch dialect {
        case .sqlite: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        case .postgres:
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
        }
        return try query(sql).map { $0.string(0) }
    }

    /// The columns of table `name`, in their declared order.
    public func columnNames(of name: String) throws -> [String] {
        switch dialect {
        case .sqlite: try query("SELECT name FROM pragma_table_info(?) ORDER BY cid", name).map { $0.string(0) }
        case .postgres:
            try query(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
                name
            ).map { $0.string(0) }
        }
    }
}
