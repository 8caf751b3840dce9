extension AuditRowValues {
    /// Rows per multi-row `INSERT`: both stores cap the bound parameters of one statement
    /// (SQLite at 32,766, PostgreSQL at 65,535).
    public static let rowsPerStatement = 500

    /// The key of the audit trail's append lock (PostgreSQL: an advisory lock every appending
    /// transaction holds shared; see `AuditChains.settledNewestID`).
    public static let appendLockKey: Int64 = TransactionLock.Key.Fixed.auditAppend.rawValue

    /// The columns, as the insert names them.
    static let columnList = columns.joined(separator: ", ")

    /// Inserts `rows` in the caller's transaction: an action's few rows in one statement, a long
    /// run in statements of `rowsPerStatement`.
    public static func insert(_ rows: [AuditRowValues], on connection: any DatabaseConnection) async throws {
        try await connection.insert(into: "audit_events", columns: columnList, rows: rows.map(\.values), perStatement: rowsPerStatement)
    }
}
