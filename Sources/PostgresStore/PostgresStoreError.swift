import DatabaseAccess
import PostgresNIO
import _ConnectionPoolModule

/// A PostgreSQL failure in words an operator can act on: the server's SQLSTATE and message
/// (postgres-nio's own description is deliberately vague), never the bound values.
public struct PostgresStoreError: Error, CustomStringConvertible {
    /// The SQLSTATE, e.g. `23505` for a unique violation; nil when the server did not answer.
    public let sqlState: String?
    public let description: String
    /// What failed without saying what was under way: the server's message, or the reason it
    /// was not reached.
    public let summary: String

    /// A value the server sent that does not decode as its type says (never its bytes: they may
    /// be a secret). Its code is photosd's own, `PD002` (as `PD001` is the stale-facts refusal):
    /// neither transient nor a storage failure, so it is a `500`, never a `503` to retry.
    static func undecodable(column: String, type: String) -> PostgresStoreError {
        let summary = "the value of column \(column) (\(type)) could not be decoded"
        return PostgresStoreError(sqlState: "PD002", description: summary, summary: summary)
    }

    /// A name that is not a table's, refused before it reaches a statement that cannot bind it.
    static func notATable(_ name: String) -> PostgresStoreError {
        let summary = "not a table name: \(name.prefix(64))"
        return PostgresStoreError(sqlState: "PD003", description: summary, summary: summary)
    }

    /// No answer from the server (transient): `summary` says what was waited for, `doing` where
    /// (the description, for the log; the summary, which answers may carry, never names the
    /// database's location).
    static func noAnswer(_ summary: String, doing: String) -> PostgresStoreError {
        PostgresStoreError(sqlState: nil, description: "\(doing): \(summary)", summary: summary)
    }

    private init(sqlState: String?, description: String, summary: String) {
        self.sqlState = sqlState
        self.description = description
        self.summary = summary
    }

    /// A failure to connect to `location`, with what its TLS settings have to do with it: a
    /// certificate no trusted CA signed, one for another host name, a server that takes only
    /// encrypted connections from a client that sent none — each named with the setting to
    /// change (the CA file by its path; never the password).
    public static func connecting(to location: PostgresLocation, _ error: any Error) -> PostgresStoreError {
        let described = PostgresStoreError(describing: error, doing: "connecting to \(location)")
        let text = "\(error) \(described.description)"
        let mode = location.sslMode
        let root = location.sslRootCert.map { "database.sslRootCert/sslrootcert \($0)" } ?? "the system's CAs (no database.sslRootCert/sslrootcert)"
        let words: String? =
            if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
                "TLS: the server's certificate is not signed by a CA in \(root) (sslmode \(mode.rawValue))"
            } else if text.contains("failedToValidateHostname") {
                "TLS: the server's certificate does not name the host \(location.host ?? "") (sslmode verify-full checks it: connect by the name on the certificate, or use verify-ca)"
            } else if mode == .disable, text.contains("no encryption") {
                "\(described.summary): the server accepts only encrypted connections, set database.sslMode (or ?sslmode=) to verify-full, verify-ca or require"
            } else if mode != .disable, described.sqlState == nil, text.contains("sslUnsupported") || text.contains("SSL") {
                "TLS (sslmode \(mode.rawValue)): \(described.summary)"
            } else {
                nil
            }
        guard let words else { return described }
        return PostgresStoreError(sqlState: described.sqlState, description: "connecting to \(location): \(words)", summary: words)
    }

    /// Describes `error` from postgres-nio, `doing` saying what was under way.
    public init(describing error: any Error, doing: String) {
        if let error = error as? PostgresStoreError {
            self = error  // already described where it happened
        } else if let error = error as? PSQLError, let info = error.serverInfo {
            sqlState = info[.sqlState]
            summary = info[.message] ?? "error"
            description = "\(doing): \(summary) (SQLSTATE \(info[.sqlState] ?? "?"))"
        } else if let error = error as? PSQLError {
            // No answer from the server: say what failed, in our words (the driver's codes, like
            // `serverClosedConnection`, mean nothing to an operator).
            sqlState = nil
            summary = Self.words(for: error)
            description = "\(doing): \(summary)"
        } else if error is ConnectionPoolError {
            // The pool gave up creating connections (postgres-nio's circuit breaker): the
            // server is not there, refuses us, or is unreachable.
            sqlState = nil
            summary = "cannot connect to the server (is it running, and does it accept this user?)"
            description = "\(doing): \(summary)"
        } else {
            sqlState = nil
            summary = "\(error)"
            description = "\(doing): \(summary)"
        }
    }
}

extension PostgresStoreError: DatabaseFailure {
    /// SQLSTATE 23505.
    public var isUniqueViolation: Bool { sqlState == "23505" }

    /// SQLSTATE PD001, raised by `photosd_stale_facts` (migration 0008).
    public var isStaleFactsRefusal: Bool { sqlState == "PD001" }

    /// No answer from the server, a lost connection (class 08), a serialization failure or
    /// deadlock (class 40), resources exhausted — a full disk is 53100 — (class 53), or the
    /// server shutting down (57P01–57P03).
    public var isTransient: Bool {
        guard let sqlState else { return true }
        return ["08", "40", "53"].contains(sqlState.prefix(2)) || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// No answer from the server, a lost connection, resources exhausted, an I/O error (class
    /// 58) or corrupted data (XX001, XX002).
    public var isStorageFailure: Bool {
        guard let sqlState else { return true }
        return ["08", "53", "58"].contains(sqlState.prefix(2)) || ["XX001", "XX002", "57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// The server's message, or why it could not be reached.
    public var failureSummary: String { summary }

    /// "SQLSTATE xxxxx", or "no answer from the server".
    public var failureCode: String { sqlState.map { "SQLSTATE \($0)" } ?? "no answer from the server" }

    /// A serialization failure (40001) or a deadlock (40P01): the whole transaction may be run again.
    public var isRetryableTransaction: Bool { sqlState == "40001" || sqlState == "40P01" }
}

extension PostgresStoreError {
    /// What a postgres-nio error without a server answer means, in a few words.
    static func words(for error: PSQLError) -> String {
        switch error.code {
        case .connectionError:
            // The operating system's reason ("Connection refused", a name that does not resolve) says most.
            "cannot connect to the server" + (error.underlying.map { " (\($0))" } ?? " (is it running, and does it accept this user?)")
        case .serverClosedConnection, .uncleanShutdown: "the server closed the connection (it may be restarting)"
        case .clientClosedConnection: "the connection was closed while the statement was under way"
        case .authMechanismRequiresPassword: "the server asks for a password, and none was given (the URL, database.passwordFile or PGPASSWORD)"
        case .unsupportedAuthMechanism: "the server asks for a way of signing in this client does not support"
        case .queryCancelled: "the statement was cancelled"
        case .poolClosed: "photosd is shutting down"
        default: "the connection to the server failed"
        }
    }
}
