import DatabaseAccess
import CSQLite

/// An error reported by SQLite, or by this layer on SQLite's behalf.
///
/// It carries the SQLite result code, SQLite's message and the SQL text that failed,
/// never the values bound to it: those may be passwords or tokens.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The SQLite (extended) result code, e.g. `SQLITE_CONSTRAINT_UNIQUE`.
    public let resultCode: Int32
    /// SQLite's own explanation (`sqlite3_errmsg`), or this layer's.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?

    /// Creates an error.
    public init(resultCode: Int32, message: String, sql: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    /// The primary result code (the low byte of the extended code), e.g. `SQLITE_CONSTRAINT`.
    public var primaryResultCode: Int32 { resultCode & 0xFF }

    /// True when the error is a UNIQUE or PRIMARY KEY violation.
    public var isUniqueViolation: Bool {
        resultCode == CSQLITE_CONSTRAINT_UNIQUE || resultCode == CSQLITE_CONSTRAINT_PRIMARYKEY
    }

    /// True when the file is not a SQLite database (`SQLITE_NOTADB`).
    public var isNotADatabase: Bool { primaryResultCode == SQLITE_NOTADB }

    /// True when another connection held a lock for longer than the busy timeout.
    public var isBusy: Bool { primaryResultCode == SQLITE_BUSY || primaryResultCode == SQLITE_LOCKED }

    /// True for a failure that can pass without anything being wrong with the request or the
    /// data: the disk full (`SQLITE_FULL`), an I/O error (`SQLITE_IOERR`), a file that cannot be
    /// opened now (`SQLITE_CANTOPEN`), or a lock held past the busy timeout.
    public var isTransient: Bool {
        isBusy || [SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN].contains(primaryResultCode)
    }

    /// True when the storage under the database failed: an I/O error (a failed read, write or
    /// fsync), a full disk, or a file that cannot be opened. The writer opens a new connection
    /// before its next transaction after one of these.
    public var isStorageFailure: Bool {
        [SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB].contains(primaryResultCode)
    }

    /// SQLite's English name for the primary result code, e.g. "database or disk is full".
    public var primaryDescription: String { String(cString: sqlite3_errstr(primaryResultCode)) }

    public var description: String {
        var text = "SQLite error \(resultCode): \(message)"
        if let sql { text += " (in: \(sql))" }
        return text
    }
}
