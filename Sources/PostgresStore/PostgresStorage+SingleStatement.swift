import DatabaseAccess
import NIOCore
import PostgresNIO

extension PostgresStorage: SingleStatementStore {
    /// Runs `Statement` with `arguments` bound by position (`?`), for statements of a few values
    /// (the tests' counters); the action's statements bind theirs by name (`BoundSQL`).
    public func run<Statement: NamedStatement>(_ statement: Statement.Type, arguments: [any DatabaseBindable]) async throws -> [Row] {
        try await runPrepared(Prepared<Statement>(arguments: arguments))
    }

    /// Runs `statement` on a pooled connection, asynchronously (no thread waits for it): it is
    /// prepared once per connection under its name (a parse and a describe, the first time),
    /// and from then on one round trip sends the name and the values and brings back the rows.
    /// Outside any transaction it commits by itself, all of it or nothing.
    func runPrepared<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] where Statement.Row: Sendable {
        guard !isClosed else { throw DatabaseClosedError() }
        let logger = self.logger
        do {
            let rows = try await withDeadline { deadline in
                try await self.client.withConnection { connection in
                    guard deadline.claim() else { throw CancellationError() }
                    deadline.onAbandon { let closing: EventLoopFuture<Void> = connection.close(); _ = closing }
                    defer { deadline.release() }
                    return try await connection.rows(of: statement, logger: logger)
                }
            }
            renewal.succeeded()
            return rows
        } catch {
            if isClosed { throw DatabaseClosedError() }
            if let error = error as? PostgresStoreError { throw error }
            throw PostgresStoreError(describing: error, doing: "running \(Statement.name)")
        }
    }
}

extension PostgresConnection {
    /// Runs a prepared statement (prepared once per connection, under its name) and collects
    /// its rows: the one way both the pool and a transaction's connection run one.
    func rows<Statement: PostgresPreparedStatement>(of statement: Statement, logger: Logger) async throws -> [Statement.Row] where Statement.Row: Sendable {
        var rows: [Statement.Row] = []
        for try await row in try await execute(statement, logger: logger) { rows.append(row) }
        return rows
    }
}

/// `Statement` as postgres-nio prepares it: its placeholders numbered, its values bound as
/// a transaction's connection binds them, its rows read the same way.
struct Prepared<Statement: NamedStatement>: PostgresPreparedStatement {
    static var name: String { "photosd_" + Statement.name }
    static var sql: String { Statement.sql.numberedText }

    let arguments: [any DatabaseBindable]

    init(arguments: [any DatabaseBindable]) { self.arguments = arguments }

    func makeBindings() throws -> PostgresBindings { PostgresTransactionConnection.bindings(arguments) }

    func decodeRow(_ row: PostgresRow) throws -> Row { try PostgresTransactionConnection.row(row) }
}
