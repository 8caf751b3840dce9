import DatabaseAccess
import CSQLite
import Foundation

/// One SQLite connection. Opened in `init`, closed explicitly by `close()` (or by `deinit`).
///
/// A connection is confined to one thread at a time (the writer's or a reader's worker thread);
/// it is deliberately not `Sendable`. Statements it prepares through `cachedStatement(_:)` are
/// kept until the connection closes, so hot queries are parsed once.
public final class Connection {
    /// How the connection is opened.
    public enum Mode: Sendable {
        /// Read and write, creating the file if needed.
        case readWrite
        /// Read only; the file must exist.
        case readOnly
    }

    /// Per-connection settings applied right after opening.
    public struct Options: Sendable {
        /// How long a statement waits for another connection's lock before `SQLITE_BUSY`.
        public var busyTimeoutMilliseconds: Int32 = 5_000
        /// `PRAGMA synchronous`: `FULL` (fsync on every commit) or `NORMAL`.
        public var synchronous: Synchronous = .full
        /// The SQLite VFS to open the file with, by its registered name; nil for the system's
        /// default. Tests use it to put a fault-injecting VFS under the real writer.
        public var vfs: String?

        /// Creates options with the defaults.
        public init(busyTimeoutMilliseconds: Int32 = 5_000, synchronous: Synchronous = .full, vfs: String? = nil) {
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.synchronous = synchronous
            self.vfs = vfs
        }
    }

    /// SQLite's `synchronous` setting, which decides what a commit survives: `full` fsyncs on
    /// every commit, `normal` (WAL) does not.
    public typealias Synchronous = Durability

    private(set) var handle: OpaquePointer?
    /// The database file's path.
    public let path: String
    /// How long a statement waits for another connection's lock (see `begin`).
    public let busyTimeoutMilliseconds: Int32
    /// How the connection was opened, so that it can be opened again the same way.
    public let mode: Mode
    /// The settings it was opened with.
    public let options: Options
    private var statementCache: [SQLKey: Statement] = [:]

    /// Process-wide SQLite settings, applied before the first connection opens (Swift runs a
    /// static initializer once, thread-safely).
    private static let configureOnce: Void = {
        _ = csqlite_disable_memory_statistics()
    }()

    /// Opens (and for `.readWrite` creates, with mode 0600) the database at `path`.
    public init(path: String, mode: Mode = .readWrite, options: Options = Options()) throws {
        self.path = path
        self.busyTimeoutMilliseconds = options.busyTimeoutMilliseconds
        self.mode = mode
        self.options = options
        if mode == .readWrite, path != ":memory:", !FileManager.default.fileExists(atPath: path) {
            // SQLite gives the -wal and -shm files the main file's permissions: create it private.
            let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            if fd >= 0 { _ = Foundation.close(fd) }
        }
        _ = Self.configureOnce
        var handle: OpaquePointer?
        let flags: Int32 = switch mode {
        case .readWrite: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        case .readOnly: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        }
        // A WAL database in a directory this process cannot write, with no -shm or -wal beside it:
        // SQLite could not create the -shm it reads through and would refuse even to read. Such
        // a file can only be read, and nothing uncommitted waits in a WAL: it is opened
        // immutable (read straight from the file; every write fails with SQLITE_READONLY).
        let immutable = Self.isReadOnlySnapshot(path)
        let target = immutable ? Self.immutableURI(path) : path
        let code = sqlite3_open_v2(target, &handle, flags | SQLITE_OPEN_EXRESCODE | (immutable ? SQLITE_OPEN_URI : 0), options.vfs)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(resultCode: code, message: "cannot open \(path): \(message)")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, options.busyTimeoutMilliseconds)
        do {
            // Reading the schema here turns "file is not a database" into an error at open time.
            try execute("PRAGMA foreign_keys = ON")
            if mode == .readWrite {
                // Asked only when not WAL already: on a read-only file (with read-only -wal and
                // -shm) even setting the mode it has fails, and such a database must still be
                // readable (its writes then fail with SQLITE_READONLY).
                // A new file returns the pages that deletions free (an archive moving old trails
                // out) to the file system, a step at a time (`incremental_vacuum`): set before
                // its first table, or never without a full VACUUM.
                if try queryOne("PRAGMA page_count")?.int("page_count") == 0 {
                    try execute("PRAGMA auto_vacuum = INCREMENTAL")
                }
                if try query("PRAGMA journal_mode").first?.string("journal_mode").lowercased()
 != "wal" {
                    try execute("PRAGMA journal_mode = WAL")
                }
                try execute("PRAGMA synchronous = \(raw: options.synchronous.rawValue.uppercased())")
                // Content deleted or overwritten is zeroed as it is freed, so that an erased
                // person's name does not linger in a page's free space or on the freelist
                // (`users erase`); with the WAL checkpointed and truncated it is then nowhere.
                try execute("PRAGMA secure_delete = ON")
            }
            _ = try query("SELECT count(*) FROM sqlite_schema")
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// True for an existing database file in a directory this process may not write, that no
    /// connection has open and no `-wal` file holds changes for (see `init`).
    static func isReadOnlySnapshot(_ path: String) -> Bool {
        guard path != ":memory:", FileManager.default.fileExists(atPath: path) else { return false }
        let directory = (path as NSString).deletingLastPathComponent
        guard access(directory.isEmpty ? "." : directory, W_OK) != 0 else { return false }
        // No -shm: no other connection has the database open (every WAL connection maps it).
        return !FileManager.default.fileExists(atPath: path + "-shm")
            && ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0) == 0
    }

    /// `path` as a URI that opens it immutable (`%`, `?` and `#` escaped, as URIs need).
    static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return "file:\(escaped)?immutable=1"
    }

    /// Finalizes every cached statement and closes the handle. Safe to call twice.
    public func close() {
        statementCache.removeAll()
        if let handle {
            sqlite3_close_v2(handle)
            self.handle = nil
        }
    }

    /// Sets SQLite's busy timeout for the next statements.
    func setBusyTimeout(_ milliseconds: Int32) {
        if let handle { sqlite3_busy_timeout(handle, milliseconds) }
    }

    func error(_ code: Int32, sql: String?) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? code
        return SQLiteError(resultCode: extended != 0 ? extended : code, message: message, sql: sql)
    }

    private func requireOpen(_ sql: String) throws -> OpaquePointer {
        guard let handle else { throw SQLiteError(resultCode: SQLITE_MISUSE, message: "connection is closed", sql: sql) }
        return handle
    }

    /// Returns the prepared statement for `sql`, preparing it on first use and reusing it after.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[SQLKey(sql)] { return statement }
        _ = try requireOpen(sql)
        let statement = try Statement(connection: self, sql: sql)
        statementCache[SQLKey(sql)] = statement
        return statement
    }

    /// Prepares a statement that is not cached (for one-off SQL).
    public func prepare(_ sql: String) throws -> Statement {
        _ = try requireOpen(sql)
        return try Statement(connection: self, sql: sql)
    }

    /// Runs `sql` to completion and returns the number of rows changed.
    @discardableResult
    public func execute(_ sql: SQL) throws -> Int {
        let statement = try cachedStatement(sql.text)
        try statement.bind(sql.arguments)
        defer { statement.reset() }
        while try statement.step() {}
        return changes
    }

    /// Runs a query and returns every row.
    public func query(_ sql: SQL) throws -> [Row] {
        let statement = try cachedStatement(sql.text)
        try statement.bind(sql.arguments)
        defer { statement.reset() }
        var rows: [Row] = []
        while try statement.step() { rows.append(statement.currentRow()) }
        return rows
    }

    /// Runs a query and returns its first row, if any.
    public func queryOne(_ sql: SQL) throws -> Row? {
        let statement = try cachedStatement(sql.text)
        try statement.bind(sql.arguments)
        defer { statement.reset() }
        return try statement.step() ? statement.currentRow() : nil
    }

    /// Calls `body` for each row without collecting them (for large result sets).
    public func forEachRow(_ sql: SQL, _ body: (Row) throws -> Void) throws {
        let statement = try prepare(sql.text)
        try statement.bind(sql.arguments)
        while try statement.step() { try body(statement.currentRow()) }
    }

    /// Runs several statements with no parameters (a migration script, say).
    public func executeScript(_ sql: String) throws {
        let handle = try requireOpen(sql)
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw SQLiteError(resultCode: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// The rowid of the last successful INSERT.
    public var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// True when no transaction is open.
    public var isAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }
}

/// The statement cache's key: the SQL text, hashed cheaply.
///
/// A writer runs a dozen cached statements per request, and hashing each SQL text in full
/// (SipHash over a few hundred bytes) was a measurable share of it. Hashing the length and a
/// few bytes is enough to tell this program's statements apart; equality still compares the
/// whole text (at once when both are the same literal), so a collision costs time, never a
/// wrong statement.
struct SQLKey: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    static func == (lhs: SQLKey, rhs: SQLKey) -> Bool { lhs.sql == rhs.sql }

    func hash(into hasher: inout Hasher) {
        var text = sql  // `withUTF8` is mutating; a native string is not copied
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            guard !bytes.isEmpty else { return }
            // Eight bytes spread over the text, first and last included: statements differ
            // in their tables and clauses, not only at the start.
            var mixed: UInt64 = 0
            for step in 0..<8 { mixed = mixed << 8 | UInt64(bytes[(bytes.count - 1) * step / 7]) }
            hasher.combine(mixed)
        }
    }
}
