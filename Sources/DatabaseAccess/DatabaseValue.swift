import Foundation

/// A value in a row or bound to a parameter: SQLite's five storage classes, which PostgreSQL's
/// column types used here map onto (see `PostgresStore`).
public enum DatabaseValue: Sendable, Equatable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift value that can be bound to a statement parameter.
public protocol DatabaseBindable: Sendable {
    /// The value to bind.
    var databaseValue: DatabaseValue { get }
}

extension DatabaseValue: DatabaseBindable {
    public var databaseValue: DatabaseValue { self }
}

extension Int: DatabaseBindable {
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Int64: DatabaseBindable {
    public var databaseValue: DatabaseValue { .integer(self) }
}

extension Int32: DatabaseBindable {
    public var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Bool: DatabaseBindable {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
}

extension Double: DatabaseBindable {
    public var databaseValue: DatabaseValue { .real(self) }
}

extension String: DatabaseBindable {
    public var databaseValue: DatabaseValue { .text(self) }
}

extension Substring: DatabaseBindable {
    public var databaseValue: DatabaseValue { .text(String(self)) }
}

extension Array: DatabaseBindable where Element == UInt8 {
    public var databaseValue: DatabaseValue { .blob(self) }
}

extension Optional: DatabaseBindable where Wrapped: DatabaseBindable {
    public var databaseValue: DatabaseValue {
        switch self {
        case .none: .null
        case .some(let value): value.databaseValue
        }
    }
}
