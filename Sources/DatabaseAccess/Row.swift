/// One result row, copied out of the statement so it outlives the next `step`. Its columns are
/// read by name, as the statement's `SELECT` names them (an expression needs an `AS`): a column
/// a statement no longer returns is an error naming it, never a value read from the wrong place.
public struct Row: Sendable {
    /// The columns' names, in order (the same array for every row of one result).
    public let columns: [String]
    /// The values, in column order (for code that copies whole rows; read by name otherwise).
    public let values: [DatabaseValue]

    /// Creates a row from its columns' names and values.
    public init(columns: [String], values: [DatabaseValue]) {
        self.columns = columns
        self.values = values
    }

    /// The raw value of `column`. Throws `RowValueError` when the row has no such column.
    public func value(_ column: String) throws -> DatabaseValue {
        // A dozen columns at most: a linear search costs less than a dictionary per result.
        guard let index = columns.firstIndex(of: column) else { throw RowValueError(column: column, expected: "a column of this name", found: nil) }
        return values[index]
    }

    /// True when the row has `column` (an older file's row may not).
    public func has(_ column: String) -> Bool { columns.contains(column) }

    /// `column` as an integer; NULL and non-integers read as nil.
    public func optionalInt64(_ column: String) throws -> Int64? {
        if case .integer(let value) = try value(column) { return value }
        return nil
    }

    /// `column` as an integer. Throws `RowValueError` for NULL or a value that is not an
    /// integer (a whole number arriving as a real — PostgreSQL's `numeric`, e.g. a `sum` — is one).
    public func int64(_ column: String) throws -> Int64 {
        let found = try value(column)
        switch found {
        case .integer(let value): return value
        case .real(let value) where value.rounded() == value && abs(value) < 9.2e18: return Int64(value)
        default: throw RowValueError(column: column, expected: "an integer", found: found)
        }
    }

    /// `column` as an `Int`; throws like `int64`.
    public func int(_ column: String) throws -> Int { Int(try int64(column)) }

    /// `column` as an optional `Int`.
    public func optionalInt(_ column: String) throws -> Int? { try optionalInt64(column).map { Int($0) } }

    /// `column` as text; NULL reads as nil, numbers as their decimal form.
    public func optionalString(_ column: String) throws -> String? {
        switch try value(column) {
        case .text(let value): value
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        case .null: nil
        }
    }

    /// `column` as text (a blob as UTF-8). Throws `RowValueError` for NULL or a number.
    public func string(_ column: String) throws -> String {
        let found = try value(column)
        switch found {
        case .text(let value): return value
        case .blob(let bytes): return String(decoding: bytes, as: UTF8.self)
        default: throw RowValueError(column: column, expected: "text", found: found)
        }
    }

    /// `column` as bytes (text as its UTF-8). Throws `RowValueError` for NULL or a number.
    public func blob(_ column: String) throws -> [UInt8] {
        let found = try value(column)
        switch found {
        case .blob(let bytes): return bytes
        case .text(let text): return Array(text.utf8)
        default: throw RowValueError(column: column, expected: "bytes", found: found)
        }
    }
}

/// A column read as a non-optional value held NULL or a value of another type, or a column
/// the statement does not return: the schema and the code disagree. Names the column and what
/// it held, never the value itself (it may be a user's data).
public struct RowValueError: Error, CustomStringConvertible {
    /// The column's name in the result.
    public var column: String
    /// What the code expected ("an integer", "text").
    public var expected: String
    /// What the column held; nil when the result has no such column.
    public var found: DatabaseValue?

    /// A column `column` that held `found` where `expected` was.
    public init(column: String, expected: String, found: DatabaseValue?) {
        self.column = column
        self.expected = expected
        self.found = found
    }

    /// "column price_cents holds NULL where an integer was expected".
    public var description: String {
        guard let found else { return "the result has no column \(column)" }
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
