extension AuditRowValues {
    /// Rows per multi-row `INSERT`: both stores cap the bound parameters of one statement
    /// (SQLite at 32,766, PostgreSQL at 65,535).
    public static let rowsPerStatement = 500

    /// The key of the audit trail's append lock (PostgreSQL: an advisory lock every appending
    /// transaction holds shared; see `AuditChains.settledNewestID`).
    public static let appendLockKey: Int64 = TransactionLock.Key.Fixed.auditAppend.rawValue

    /// The insert of `rows` rows.
    static func insertStatement(rows: Int) -> String {
        let marks = "(" + SQLPlaceholders.list(columns.count) + ")"
        return "INSERT INTO audit_events (\(columns.joined(separator: ", "))) VALUES " + Array(repeating: marks, count: rows).joined(separator: ", ")
    }

    /// The inserts of the few rows an action appends, made once.
    static let insertStatements = (0..<16).map { insertStatement(rows: $0) }

    /// Inserts `rows` in the caller's transaction: an action's few rows in one statement, a long
    /// run in statements of `rowsPerStatement`.
    public static func insert(_ rows: [AuditRowValues], on connection: any DatabaseConnection) async throws {
        for start in stride(from: 0, to: rows.count, by: rowsPerStatement) {
            let part = rows[start..<min(start + rowsPerStatement, rows.count)]
            var arguments: [any DatabaseBindable] = []
            arguments.reserveCapacity(part.count * columns.count)
            for row in part { arguments += row.values }
            try await connection.execute(part.count < insertStatements.count ? insertStatements[part.count] : insertStatement(rows: part.count), arguments: arguments)
        }
    }
}
