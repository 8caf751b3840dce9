/// One result row, copied out of the statement so it outlives the next `step`.
public struct Row: Sendable {
    /// The values, in column order.
    public let values: [DatabaseValue]

    /// Creates a row from its values.
    public init(values: [DatabaseValue]) { self.values = values }

    /// The raw value of column `index`.
    public subscript(index: Int) -> DatabaseValue { values[index] }

    /// Column `index` as an integer; NULL and non-integers read as nil.
    public func optionalInt64(_ index: Int) -> Int64? {
        if case .integer(let value) = values[index] { return value }
        return nil
    }

    /// Column `index` as an integer. Throws `RowValueError` for NULL or a value that is not an
    /// integer (a whole number arriving as a real — PostgreSQL's `numeric`, e.g. a `sum` — is one).
    public func int64(_ index: Int) throws -> Int64 {
        switch values[index] {
        case .integer(let value): return value
        case .real(let value) where value.rounded() == value && abs(value) < 9.2e18: return Int64(value)
        default: throw RowValueError(column: index, expected: "an integer", found: values[index])
        }
    }

    /// Column `index` as an `Int`; throws like `int64`.
    public func int(_ index: Int) throws -> Int { Int(try int64(index)) }

    /// Column `index` as an optional `Int`.
    public func optionalInt(_ index: Int) -> Int? { optionalInt64(index).map { Int($0) } }

    /// Column `index` as text; NULL reads as nil, numbers as their decimal form.
    public func optionalString(_ index: Int) -> String? {
        switch values[index] {
        case .text(let value): value
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        case .null: nil
        }
    }

    /// Column `index` as text (a blob as UTF-8). Throws `RowValueError` for NULL or a number.
    public func string(_ index: Int) throws -> String {
        switch values[index] {
        case .text(let value): value
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        default: throw RowValueError(column: index, expected: "text", found: values[index])
        }
    }

    /// Column `index` as bytes (text as its UTF-8). Throws `RowValueError` for NULL or a number.
    public func blob(_ index: Int) throws -> [UInt8] {
        switch values[index] {
        case .blob(let bytes): bytes
        case .text(let text): Array(text.utf8)
        default: throw RowValueError(column: index, expected: "bytes", found: values[index])
        }
    }
}

/// A column read as a non-optional value held NULL or a value of another type: the schema and
/// the code disagree. Names the column (by its position in the `SELECT`) and what it held, never
/// the value itself (it may be a user's data).
public struct RowValueError: Error, CustomStringConvertible {
    /// The 0-based position of the column in the result.
    public var column: Int
    /// What the code expected ("an integer", "text").
    public var expected: String
    /// What the column held.
    public var found: DatabaseValue

    /// A column `column` that held `found` where `expected` was.
    public init(column: Int, expected: String, found: DatabaseValue) {
        self.column = column
        self.expected = expected
        self.found = found
    }

    /// "column 2 holds NULL where text was expected".
    public var description: String {
        let held = switch found {
        case .null: "NULL"
        case .integer: "an integer"
        case .real: "a real number"
        case .text: "text"
        case .blob: "bytes"
        }
        return "column \(column) holds \(held) where \(expected) was expected"
    }
}
