import DatabaseAccess
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// One pooled PostgreSQL connection inside a transaction, seen through `DatabaseConnection`:
/// each statement is sent and its answer awaited (the task suspends; no thread waits).
///
/// It is used by one task at a time, for the duration of one `write` or `read` call.
final class PostgresTransactionConnection: DatabaseConnection {
    let connection: PostgresConnection
    let logger: Logger
    /// Cursors opened so far, for a unique name each (they live until the transaction ends).
    private var cursorCount = 0

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    @discardableResult
    func execute(_ sql: SQL) async throws -> Int {
        try await run(sql.numberedText, sql.arguments).metadata.rows ?? 0
    }

    func query(_ sql: SQL) async throws -> [Row] {
        try Self.rows(try await run(sql.numberedText, sql.arguments).rows)
    }

    func executeScript(_ sql: String) async throws {
        // One statement per query: postgres-nio speaks only the extended protocol.
        for statement in SQLScript.statements(sql) { try await run(statement, []) }
    }

    func forEachRow(_ sql: SQL, _ body: (Row) async throws -> Void) async throws {
        // `body` may run other statements on this connection, which cannot interleave with a
        // result still streaming in: rather than collect a whole result (an audit verify of
        // millions of rows), a server-side cursor is read a page at a time. Every statement runs inside `write`'s or `read`'s transaction, which
        // a cursor needs; it is closed at the end, and by the transaction's end if `body` throws.
        cursorCount += 1
        let cursor = "photosd_rows_\(cursorCount)"
        try await run("DECLARE \(cursor) NO SCROLL CURSOR FOR " + sql.numberedText, sql.arguments)
        while true {
            let page = try Self.rows(try await run("FETCH FORWARD \(Self.cursorPageSize) FROM \(cursor)", []).rows)
            for row in page { try await body(row) }
            let count = page.count
            if count < Self.cursorPageSize { break }
        }
        try await run("CLOSE \(cursor)", [])
    }

    /// Rows fetched per round trip by `forEachRow`: memory stays flat, round trips stay few.
    static let cursorPageSize = 1_000

    /// Runs a prepared statement (prepared once per connection, as the pool's single
    /// statements are) and awaits its rows.
    func runPrepared<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] where Statement.Row: Sendable {
        do {
            return try await connection.rows(of: statement, logger: logger)
        } catch {
            throw PostgresStoreError(describing: error, doing: "running \(Statement.name)")
        }
    }

    /// Sends one statement and awaits all of its rows.

    @discardableResult
    func run(_ sql: String, _ arguments: [any DatabaseBindable]) async throws -> PostgresQueryResult {
        let query = PostgresQuery(unsafeSQL: sql, binds: Self.bindings(arguments))
        do {
            let answer: EventLoopFuture<PostgresQueryResult> = connection.query(query, logger: logger)
            return try await answer.get()
        } catch {
            throw PostgresStoreError(describing: error, doing: "running \(Self.excerpt(sql))")
        }
    }

    /// Values as PostgreSQL receives them: integers as `int8`, reals as `float8`, text, bytes.
    static func bindings(_ arguments: [any DatabaseBindable]) -> PostgresBindings {
        var binds = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument.databaseValue {
            case .null: binds.appendNull()
            case .integer(let value): binds.append(value)
            case .real(let value): binds.append(value)
            case .text(let value): binds.append(value)
            case .blob(let bytes): binds.append(ByteBuffer(bytes: bytes))
            }
        }
        return binds
    }

    /// The statement as an error names it: its first line, shortened (never the values).
    static func excerpt(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        return flat.count > 100 ? String(flat.prefix(100)) + "…" : flat
    }

    /// Rows as services read them (`row`), the columns' names taken once for the whole result.
    static func rows(_ rows: [PostgresRow]) throws -> [Row] {
        guard let first = rows.first else { return [] }
        let columns = first.map(\.columnName)
        return try rows.map { try row($0, columns: columns) }
    }

    /// A row as services read it: integers, reals, text and bytes, like SQLite's storage classes.
    /// Throws when a value the server sent cannot be decoded as its type says: a NULL read in its
    /// place would be taken for a missing value.
    static func row(_ row: PostgresRow, columns: [String]? = nil) throws -> Row {
        var values: [DatabaseValue] = []
        values.reserveCapacity(row.count)
        for cell in row { values.append(try value(cell)) }
        return Row(columns: columns ?? row.map(\.columnName), values: values)
    }

    static func value(_ cell: PostgresCell) throws -> DatabaseValue {
        guard let bytes = cell.bytes else { return .null }
        do {
            switch cell.dataType {
            case .int2, .int4, .int8, .oid:
                return .integer(try cell.decode(Int64.self))
            case .bool:
                return .integer(try cell.decode(Bool.self) ? 1 : 0)
            case .float4, .float8:
                return .real(try cell.decode(Double.self))
            case .numeric:
                // sum() and avg() of integers: whole numbers read as integers, as SQLite gives them.
                let text = try cell.decode(Decimal.self).description
                if let integer = Int64(text) { return .integer(integer) }
                return Double(text).map(DatabaseValue.real) ?? .text(text)
            case .bytea:
                return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            default:
                // Text, and the types read as their text form (json, timestamps as text).
                if let text = try? cell.decode(String.self) { return .text(text) }
                return .text(String(decoding: bytes.readableBytesView, as: UTF8.self))
            }
        } catch {
            throw PostgresStoreError.undecodable(column: cell.columnName, type: "\(cell.dataType)")
        }
    }
}
