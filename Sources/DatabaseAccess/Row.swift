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

    /// Column `index` as an integer (0 for NULL).
    public func int64(_ index: Int) -> Int64 { optionalInt64(index) ?? 0 }

    /// Column `index` as an `Int` (0 for NULL).
    public func int(_ index: Int) -> Int { Int(int64(index)) }

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

    /// Column `index` as text ("" for NULL).
    public func string(_ index: Int) -> String { optionalString(index) ?? "" }

    /// Column `index` as bytes.
    public func blob(_ index: Int) -> [UInt8] {
        switch values[index] {
        case .blob(let bytes): bytes
        case .text(let text): Array(text.utf8)
        default: []
        }
    }
}
