import DatabaseAccess
import PostgresNIO

/// A statement's text with each value bound where it appears: `WHERE id = \({ $0.sessionID }, .text)`
/// numbers the parameter, casts it, and remembers how to take its value from the statement's
/// input. Nothing is matched by position by hand, so a value added or moved cannot bind to the
/// wrong placeholder. Built once (a `static let`), then bound per run.
///
/// Every placeholder carries its cast, so the types are fixed when the statement is prepared
/// (once per connection), whatever values come later, NULL included.
struct BoundSQL<Input>: ExpressibleByStringInterpolation, Sendable {
    /// The text, with `$1`, `$2`, … placeholders.
    let text: String
    /// The text with every placeholder as `marker`, unnumbered: what a statement that
    /// interpolates this one as a part takes (its placeholders are numbered in the whole).
    private let parts: String
    private let binders: [@Sendable (Input, inout [DatabaseValue]) -> Void]

    /// How many placeholders the text has.
    let parameterCount: Int

    init(stringLiteral value: String) {
        text = value
        parts = value
        binders = []
        parameterCount = 0
    }

    init(stringInterpolation: Interpolation) {
        parts = stringInterpolation.text
        binders = stringInterpolation.binders
        parameterCount = stringInterpolation.parameterCount
        var numbered = ""
        var number = 0
        for piece in parts.split(separator: Self.marker, omittingEmptySubsequences: false) {
            if number > 0 { numbered += "$\(number)" }
            numbered += piece
            number += 1
        }
        text = numbered
    }

    /// Where a placeholder's number goes, until the whole text is known.
    private static var marker: Character { "\u{0}" }

    /// The values of `input`, in placeholder order.
    func values(_ input: Input) -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        values.reserveCapacity(parameterCount)
        for binder in binders { binder(input, &values) }
        return values
    }

    /// The values of `input`, bound.
    func bindings(_ input: Input) -> PostgresBindings {
        let values = values(input)
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        return bindings
    }

    /// The PostgreSQL type a placeholder is cast to.
    enum SQLType: String {
        case bigint, text, jsonb
        case bigintArray = "bigint[]"
    }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate var text = ""
        fileprivate var binders: [@Sendable (Input, inout [DatabaseValue]) -> Void] = []
        fileprivate var parameterCount = 0

        init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 8 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// A placeholder for `value`, cast to `type`.
        mutating func appendInterpolation<Value: DatabaseBindable>(_ value: @escaping @Sendable (Input) -> Value, _ type: SQLType) {
            binders.append { input, values in values.append(value(input).databaseValue) }
            text += placeholder(type)
        }

        /// A placeholder for a flag, as a boolean expression (bound as 0 or 1: a boolean
        /// parameter would need the binary boolean format).
        mutating func appendInterpolation(flag value: @escaping @Sendable (Input) -> Bool) {
            binders.append { input, values in values.append(.integer(value(input) ? 1 : 0)) }
            text += "(\(placeholder(.bigint)) <> 0)"
        }

        /// A placeholder for a set of ids, a `bigint[]` parameter bound as its text (`{3,7}`).
        /// Typed `bigint[]` itself, not `text` cast to it: with `$n::text::bigint[]` the write with
        /// effects took 0.2–0.3 ms more of the server per run (pg_stat_statements' mean, 466–486
        /// µs typed against 682–748 µs cast), most likely planned anew each time.
        mutating func appendInterpolation(ids value: @escaping @Sendable (Input) -> Set<Int64>) {
            binders.append { input, values in values.append(.text(IDList.text(value(input)))) }
            text += placeholder(.bigintArray)
        }

        /// `name = $n::type, …` for each of a session row's updated columns, bound to its value.
        mutating func appendInterpolation(assigning row: @escaping @Sendable (Input) -> SessionRow) {
            binders.append { input, values in values += row(input).updatedColumns.map(\.value.databaseValue) }
            text += SessionRow.shape.updatedColumns.map { "\($0.name) = \(placeholder($0.isInteger ? .bigint : .text))" }.joined(separator: ", ")
        }

        /// `(name, …) SELECT $n::type, …` for each of a session row's inserted columns, bound to its value.
        mutating func appendInterpolation(inserting row: @escaping @Sendable (Input) -> SessionRow) {
            binders.append { input, values in values += row(input).insertedColumns.map(\.value.databaseValue) }
            let columns = SessionRow.shape.insertedColumns
            text += "(" + columns.map(\.name).joined(separator: ", ") + ") SELECT "
                + columns.map { placeholder($0.isInteger ? .bigint : .text) }.joined(separator: ", ")
        }

        /// Another statement's text as a part of this one, its values bound where they appear.
        mutating func appendInterpolation(_ part: BoundSQL<Input>) {
            text += part.parts
            binders += part.binders
            parameterCount += part.parameterCount
        }

        /// Text from the code itself (a column list, a constant), never a value.
        mutating func appendInterpolation(sql fragment: String) {
            text += fragment
        }

        private mutating func placeholder(_ type: SQLType) -> String {
            parameterCount += 1
            return "\(BoundSQL.marker)::\(type.rawValue)"
        }
    }
}
