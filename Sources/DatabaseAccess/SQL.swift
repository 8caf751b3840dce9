/// A statement with its values bound where they appear: `"SELECT name FROM users WHERE id = \(id)"`
/// binds `id` (it never becomes part of the text), and the store renders the placeholder its own
/// way (`?` on SQLite, `$1`, `$2`, … on PostgreSQL). Nothing is matched by position by hand, so
/// a value added or moved cannot bind to the wrong placeholder, and no statement is written
/// twice for the two stores.
///
/// What may be interpolated:
/// - a value (`some DatabaseBindable`, NULL for a nil optional): bound;
/// - another `SQL` (`\(fragment)`): its text and values, in place;
/// - `\(list: values)`: `?, ?, ?` with each value bound (an `IN (…)` or `VALUES (…)` list);
/// - `\(raw: text)`: text spliced as it is — fixed SQL from the code (a column list, a table
///   name, what a store's capability answers), never input.
///
/// A `String` interpolated binds like any value: text is only spliced through `raw:`.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The text in SQLite's form, a `?` where each value is bound. No other `?` may appear in
    /// it (PostgreSQL's form numbers every `?`): none is written into SQL by hand, which
    /// `LayeringTests.sqlValuesOnly` checks in the sources.
    public private(set) var text: String
    /// The values, in the order of their placeholders.
    public private(set) var arguments: [any DatabaseBindable]

    /// A statement without values (or a fragment of one).
    public init(stringLiteral value: String) {
        text = value
        arguments = []
    }

    public init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
        arguments = stringInterpolation.arguments
    }

    /// Fixed text from the code (see `\(raw:)`).
    public init(raw text: String) {
        self.text = text
        arguments = []
    }

    /// The text in PostgreSQL's form: the k-th placeholder as `$k`.
    public var numberedText: String {
        guard text.utf8.contains(UInt8(ascii: "?")) else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 2 * arguments.count)
        var number = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: "?") {
                number += 1
                output.append(UInt8(ascii: "$"))
                output.append(contentsOf: String(number).utf8)
            } else {
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// This statement with `values` bound, in order, to its `\(unbound:)` placeholders: a text
    /// made once (a `static let`) and shared by every run, for a statement on the hot path whose
    /// values come from one list that also made its text (a row's columns). A count that does
    /// not match is the store's error when the statement runs.
    public func binding(_ values: [any DatabaseBindable]) -> SQL {
        var bound = self
        bound.arguments = arguments.isEmpty ? values : arguments + values
        return bound
    }

    /// The text (the values are not shown: they may be secrets).
    public var description: String { text }

    /// `lhs` followed by `rhs`, values and all.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var joined = lhs
        joined += rhs
        return joined
    }

    /// Appends `rhs`, values and all.
    public static func += (lhs: inout SQL, rhs: SQL) {
        lhs.text += rhs.text
        lhs.arguments += rhs.arguments
    }

    /// `parts` joined by `separator`, values and all (`SET a = ?, b = ?`, `VALUES (…), (…)`).
    public static func joined(_ parts: some Sequence<SQL>, separator: String = ", ") -> SQL {
        var joined = SQL(raw: "")
        var first = true
        for part in parts {
            if !first { joined.text += separator }
            first = false
            joined += part
        }
        return joined
    }

    /// Builds an `SQL` from a string literal with interpolations.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text: String
        var arguments: [any DatabaseBindable]

        public init(literalCapacity: Int, interpolationCount: Int) {
            text = ""
            text.reserveCapacity(literalCapacity + interpolationCount)
            arguments = []
            arguments.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds `value` here.
        public mutating func appendInterpolation(_ value: some DatabaseBindable) {
            text += "?"
            arguments.append(value)
        }

        /// Binds `value` here, NULL when it is nil.
        public mutating func appendInterpolation<Value: DatabaseBindable>(_ value: Value?) {
            text += "?"
            arguments.append(value)
        }

        /// Puts `sql` here: its text and its values.
        public mutating func appendInterpolation(_ sql: SQL) {
            text += sql.text
            arguments += sql.arguments
        }

        /// `?, ?, …`, one for each of `values`, each bound (nothing for none).
        public mutating func appendInterpolation<C: Collection>(list values: C) where C.Element: DatabaseBindable {
            appendInterpolation(unbound: values.count)
            arguments += values.map { $0 as any DatabaseBindable }
        }

        /// `?, ?, …`, one for each of `values`, each bound (nothing for none).
        public mutating func appendInterpolation(list values: [any DatabaseBindable]) {
            appendInterpolation(unbound: values.count)
            arguments += values
        }

        /// `count` placeholders (`?, ?, …`) whose values are given later, by their position:
        /// each time a prepared statement runs (`ReusableStatement`, `NamedStatement`), or to a
        /// text made once by `binding(_:)`.
        public mutating func appendInterpolation(unbound count: Int) {
            for index in 0..<count { text += index == 0 ? "?" : ", ?" }
        }

        /// Splices `text` as it is: fixed SQL from the code (names, a column list, a store's
        /// own expression), never a value that came from outside.
        public mutating func appendInterpolation(raw text: String) {
            self.text += text
        }
    }
}

extension DatabaseConnection {
    /// Inserts `rows` into `table`, each row its values in the order of `columns` (a column list
    /// from the code), `perStatement` rows to a multi-row `INSERT`: both stores cap the values
    /// bound to one statement (SQLite at 32,766, PostgreSQL at 65,535).
    public func insert(
        into table: String, columns: String, rows: some Collection<[any DatabaseBindable]>, perStatement: Int
    ) async throws {
        var rest = rows[...]
        while !rest.isEmpty {
            let part = rest.prefix(perStatement)
            rest = rest.dropFirst(part.count)
            let values = SQL.joined(part.map { "(\(list: $0))" })
            try await execute("INSERT INTO \(raw: table) (\(raw: columns)) VALUES \(values)")
        }
    }
}
