import DatabaseAccess

/// SQLite's connection as services see it. Its synchronous methods meet the protocol's `async`
/// requirements: a statement is answered at once, on the thread the transaction runs on. What
/// differs from PostgreSQL is answered here in SQLite's terms: one writer runs the write
/// transactions one after another, so no lock beyond the transaction's own is ever needed.
extension Connection: DatabaseConnection, ReusableStatementConnection {
    /// Calls `body` for each row without collecting them, awaiting it (a service's `forEachRow`).
    public func forEachRow(_ sql: SQL, _ body: (Row) async throws -> Void) async throws {
        let statement = try prepare(sql.text)
        try statement.bind(sql.arguments)
        while try statement.step() { try await body(statement.currentRow()) }
    }

    /// Nothing to take: the single writer runs one write transaction at a time.
    public func hold(_ locks: [TransactionLock]) throws {}

    /// Nothing to take: the single writer already holds every other writer back.
    public func holdWriters(of tables: [String]) throws {}

    /// Nothing to do: the next rowid follows the largest one by itself.
    public func advanceIdentity(of tables: [String]) throws {}

    /// `json_extract(column, '$.a.b')`.
    public func jsonText(_ column: String, path: [String]) -> SQL {
        SQL(raw: "json_extract(\(column), '$.\(path.joined(separator: "."))')")
    }

    /// True when the database has a table named `name`.
    public func tableExists(_ name: String) throws -> Bool {
        try queryOne("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = \(name)") != nil
    }

    /// The database's tables but SQLite's internal `sqlite_…` ones, sorted.
    public func tableNames() throws -> [String] {
        try query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
            .map { try $0.string("name") }
    }

    /// The columns of table `name`, in their declared order.
    public func columnNames(of name: String) throws -> [String] {
        try query("SELECT name FROM pragma_table_info(\(name)) ORDER BY cid").map { try $0.string("name") }
    }

    /// A prepared statement, run with no round trip.
    public func prepareReusable(_ sql: SQL) throws -> any ReusableStatement { try prepare(sql.text) }
}

extension Statement: ReusableStatement {}

extension SQLiteError: DatabaseFailure {
    /// SQLite's English name for the primary result code.
    public var failureSummary: String { primaryDescription }
    /// "SQLite error N", the extended result code.
    public var failureCode: String { "SQLite error \(resultCode)" }
}
