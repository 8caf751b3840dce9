import DatabaseAccess
import CSQLite

/// SQLite's `SQLITE_TRANSIENT`: tells SQLite to copy bound text and blobs before returning.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement. Prepared in `init`, finalized in `deinit`.
///
/// A statement belongs to the connection that prepared it and, like it, is used by one thread
/// at a time; it is not `Sendable`.
public final class Statement {
    let handle: OpaquePointer
    /// The SQL text, kept for error messages.
    public let sql: String
    unowned let connection: Connection

    init(connection: Connection, sql: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            if let handle { sqlite3_finalize(handle) }
            throw connection.error(code, sql: sql)
        }
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Clears the previous run and binds `arguments` to the parameters, in order.
    public func bind(_ arguments: [any DatabaseBindable]) throws {
        sqlite3_reset(handle)
        // No sqlite3_clear_bindings: every parameter is bound below (the count must match).
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard expected == arguments.count else {
            throw SQLiteError(
                resultCode: SQLITE_RANGE,
                message: "statement expects \(expected) arguments, got \(arguments.count)",
                sql: sql)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch argument.databaseValue {
            case .null: code = sqlite3_bind_null(handle, index)
            case .integer(let value): code = sqlite3_bind_int64(handle, index, value)
            case .real(let value): code = sqlite3_bind_double(handle, index, value)
            case .text(let value): code = Self.bindText(value, to: handle, at: index)
            case .blob(let bytes):
                code = bytes.withUnsafeBytes { buffer in
                    sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), sqliteTransient)
                }
            }
            guard code == SQLITE_OK else { throw connection.error(code, sql: sql) }
        }
    }

    // MARK: Binding one parameter at a time (bulk loads: no arrays, no existentials)

    /// Binds UTF-8 text given as bytes to parameter `index` (1-based); SQLite copies it.
    public func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) throws {
        let code = Self.bindText(bytes, to: handle, at: index)
        guard code == SQLITE_OK else { throw connection.error(code, sql: sql) }
    }

    /// Binds text to parameter `index` (1-based); SQLite copies it.
    public func bindText(_ text: String, at index: Int32) throws {
        let code = Self.bindText(text, to: handle, at: index)
        guard code == SQLITE_OK else { throw connection.error(code, sql: sql) }
    }

    /// The one way text is bound: with its length, from the string's own UTF-8 (no C-string
    /// copy, no `strlen`, so a NUL byte inside the text is kept).
    private static func bindText(_ text: String, to handle: OpaquePointer, at index: Int32) -> Int32 {
        var text = text  // `withUTF8` is mutating; a native string is not copied
        return text.withUTF8 { bindText($0, to: handle, at: index) }
    }

    private static func bindText(_ bytes: UnsafeBufferPointer<UInt8>, to handle: OpaquePointer, at index: Int32) -> Int32 {
        // A null pointer would bind NULL: empty text gets a literal's.
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, sqliteTransient)
        }
        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text(handle, index, $0, Int32(bytes.count), sqliteTransient)
        }
    }

    /// Binds an integer to parameter `index` (1-based).
    public func bindInt(_ value: Int64, at index: Int32) throws {
        let code = sqlite3_bind_int64(handle, index, value)
        guard code == SQLITE_OK else { throw connection.error(code, sql: sql) }
    }

    /// Runs the statement to completion (an INSERT, say) and resets it.
    public func run() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Advances to the next row. Returns false when the statement is done.
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Resets the statement so that it can run again (keeps bindings).
    public func reset() {
        sqlite3_reset(handle)
    }

    /// The number of result columns.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// Reads column `index` of the current row.
    public func value(at index: Int) -> DatabaseValue {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default: return .null
        }
    }

    /// The result columns' names (an `AS` alias, else SQLite's name for the column), read
    /// once per prepared statement and shared by every row it returns.
    public private(set) lazy var columnNames: [String] = (0..<columnCount).map { index in
        sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
    }

    /// Copies the current row out of the statement.
    public func currentRow() -> Row {
        Row(columns: columnNames, values: (0..<columnCount).map { value(at: $0) })
    }
}
