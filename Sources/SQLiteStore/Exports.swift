// The types services share with the PostgreSQL store (values, rows, the connection protocol)
// come with `import SQLiteStore`, under their old names too.
@_exported import DatabaseAccess

/// The value type shared by both stores, by the name this module first gave it.
public typealias SQLiteValue = DatabaseValue
/// The bindable protocol shared by both stores, by the name this module first gave it.
public typealias SQLiteBindable = DatabaseBindable

extension Connection: DatabaseConnection {
    /// SQLite's dialect.
    public var dialect: SQLDialect { .sqlite }
}

extension SQLiteError: DatabaseFailure {
    /// SQLite's English name for the primary result code.
    public var failureSummary: String { primaryDescription }
    /// "SQLite error N", the extended result code.
    public var failureCode: String { "SQLite error \(resultCode)" }
}
