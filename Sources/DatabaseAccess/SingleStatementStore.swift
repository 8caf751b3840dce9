/// A statement with a fixed text, known by name: a store that supports it prepares the text once
/// per connection and afterwards sends only the name and the values.
public protocol NamedStatement {
    /// A name unique among the process's statements.
    static var name: String { get }
    /// The SQL, its values `\(unbound:)` (bound by position at each run). Every placeholder
    /// carries a cast (`\(unbound: 1)::bigint`), so that the types are fixed when the statement
    /// is prepared, whatever values come later.
    static var sql: SQL { get }
}

/// A store that runs one statement by itself, asynchronously, in one round trip to the server:
/// the statement commits on its own (all of it or nothing), no transaction around it and no
/// thread waiting for it.
///
/// The PostgreSQL store provides it (its action contract runs on the same machinery, with
/// statements that bind their values by name: `SessionStatements`); the tests use it to count
/// the server's statements. SQLite's store does not: a statement costs no round trip there.
public protocol SingleStatementStore: DatabaseStore {
    /// Runs `Statement` with `arguments` bound and returns its rows. A statement that fails
    /// changes nothing.
    func run<Statement: NamedStatement>(_ statement: Statement.Type, arguments: [any DatabaseBindable]) async throws -> [Row]
}
