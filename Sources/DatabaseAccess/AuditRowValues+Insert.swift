extension AuditRowValues {
    /// Rows per multi-row `INSERT`: both stores cap the bound parameters of one statement
    /// (SQLite at 32,766, PostgreSQL at 65,535).
    public static let rowsPerStatement = 500

    /// The key of the audit trail's append lock (PostgreSQL: an advisory lock every appending
    /// transaction holds shared; see `AuditChains.settledNewestID`).
    public static let appendLockKey: Int64 = TransactionLock.Key.Fixed.auditAppend.rawValue

    /// The columns, as the insert names them.
    static let columnList = columns.joined(separator: ", ")

    /// The inserts of the few rows an action appends (1 to 15), their texts made once.
    static let insertStatements: [SQL] = (0..<16).map { count in
        let row: SQL = "(\(unbound: columns.count))"
        return "INSERT INTO audit_events (\(raw: columnList)) VALUES \(SQL.joined(Array(repeating: row, count: count)))"
    }

    /// Inserts `rows` in the caller's transaction: an action's few rows in one statement, a long
    /// run in statements of `rowsPerStatement`.
    public static func insert(_ rows: [AuditRowValues], on connection: any DatabaseConnection) async throws {
        guard rows.count < insertStatements.count else {
            return try await connection.insert(into: "audit_events", columns: columnList, rows: rows.map(\.values), perStatement: rowsPerStatement)
        }
        guard !rows.isEmpty else { return }
        var values: [any DatabaseBindable] = []
        values.reserveCapacity(rows.count * columns.count)
        for row in rows { values += row.values }
        try await connection.execute(insertStatements[rows.count].binding(values))
    }
}
