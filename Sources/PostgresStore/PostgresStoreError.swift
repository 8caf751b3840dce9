import PostgresNIO

/// A PostgreSQL failure in words an operator can act on: the server's SQLSTATE and message
/// (postgres-nio's own description is deliberately vague), never the bound values.
public struct PostgresStoreError: Error, CustomStringConvertible {
    /// The SQLSTATE, e.g. `23505` for a unique violation; nil when the server did not answer.
    public let sqlState: String?
    public let description: String

    /// Describes `error` from postgres-nio, `doing` saying what was under way.
    public init(describing error: any Error, doing: String) {
        if let error = error as? PSQLError, let info = error.serverInfo {
            sqlState = info[.sqlState]
            description = "\(doing): \(info[.message] ?? "error") (SQLSTATE \(info[.sqlState] ?? "?"))"
        } else if let error = error as? PSQLError {
            // No answer from the server: say what failed underneath (connection refused, …).
            sqlState = nil
            description = "\(doing): \(error.code)" + (error.underlying.map { ": \($0)" } ?? "")
        } else if String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError") {
            // The pool gave up creating connections (postgres-nio's circuit breaker): the
            // server is not there, refuses us, or is unreachable.
            sqlState = nil
            description = "\(doing): cannot connect to the server (is it running, and does it accept this user?)"
        } else {
            sqlState = nil
            description = "\(doing): \(error)"
        }
    }
}
