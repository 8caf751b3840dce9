import DatabaseAccess
import PostgresNIO

/// The action contract on PostgreSQL: the read and the write each one statement, one round trip
/// (`SessionStatements`), no transaction held open between them and no row locked; several
/// instances decide on one session at once, and the write's conditions let only one of them
/// keep what it decided.
extension PostgresStorage {
    public func readForAction(_ read: ActionRead) async throws -> ActionSnapshot {
        try await SessionStatements.read(read, on: self)
    }

    public func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome {
        try await SessionStatements.write(write, on: self)
    }

    /// A transaction with the session's row locked (`FOR UPDATE`) until it ends: other
    /// instances' writes of this session wait for it. The same statements run there, each write
    /// under a savepoint (`LockedSessionActions`).
    public func withSessionLocked<T: Sendable>(_ sessionID: String, _ body: @escaping @Sendable (any SessionActions) async throws -> T) async throws -> T {
        try await writeTransaction { transaction in
            _ = try await transaction.query("SELECT 1 FROM sessions WHERE id = \(sessionID) FOR UPDATE")
            return try await body(LockedSessionActions(transaction: transaction))
        }
    }

    public func pruneAnswers(storedAtOrBefore cutoff: String) async throws -> Int {
        try await self.write { connection in try await connection.execute("DELETE FROM idempotency_keys WHERE created_at <= \(cutoff)") }
    }

    /// Vacuums `tables` (outside a transaction, as VACUUM must run): the row versions an
    /// erasure left dead, which still hold the old values, are removed from the pages. The
    /// server's WAL and its archive keep them until they are recycled (docs/reliability.md).
    public func purgeDeletedContent(tables: [String]) async throws {
        for table in tables {
            // Table names come from the code, never from input; checked all the same, since
            // VACUUM takes no bound parameters.
            guard !table.isEmpty, table.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) else {
                throw PostgresStoreError.notATable(table)
            }
        }
        let sql = "VACUUM " + tables.joined(separator: ", ")
        guard !isClosed else { throw DatabaseClosedError() }
        let logger = self.logger
        do {
            try await client.withConnection { connection in
                _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            }
        } catch {
            if isClosed { throw DatabaseClosedError() }
            throw PostgresStoreError(describing: error, doing: "vacuuming \(tables.joined(separator: ", "))")
        }
    }
}

/// The action contract inside a transaction holding the session's row: the same prepared
/// statements as every other write, on the transaction's connection. A statement that refuses
/// (`photosd_stale_facts`) aborts what it began; its savepoint is rolled back to, so the
/// transaction goes on for the next round.
struct LockedSessionActions: SessionActions {
    let transaction: PostgresTransactionConnection

    func readForAction(_ read: ActionRead) async throws -> ActionSnapshot {
        try await SessionStatements.read(read, on: transaction)
    }

    func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome {
        try await transaction.run("SAVEPOINT photosd_action_write", [])
        let outcome = try await SessionStatements.write(write, on: transaction)
        if outcome.isStale { try await transaction.run("ROLLBACK TO SAVEPOINT photosd_action_write", []) }
        try await transaction.run("RELEASE SAVEPOINT photosd_action_write", [])
        return outcome
    }
}

/// Where the action's statements run: the pool (each its own transaction) or a transaction's
/// connection.
protocol PreparedStatementRunner {
    func runPrepared<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws -> [Statement.Row] where Statement.Row: Sendable
}

extension PostgresStorage: PreparedStatementRunner {}
extension PostgresTransactionConnection: PreparedStatementRunner {}

extension SessionStatements {
    /// The action's read, one statement on `runner`.
    static func read(_ read: ActionRead, on runner: some PreparedStatementRunner) async throws -> ActionSnapshot {
        guard let snapshot = try await runner.runPrepared(ActionReadStatement(read: read)).first else {
            throw PostgresStoreError.undecodable(column: "the action's read", type: "one row")
        }
        return snapshot
    }

    /// The action's write, one statement on `runner`: what its conditions refuse is the outcome.
    static func write(_ write: ActionWrite, on runner: some PreparedStatementRunner) async throws -> ActionWriteOutcome {
        let input = WriteInput(write)
        let written: Int64?
        do {
            switch write.kind {
            case .create:
                written = try await runner.runPrepared(SessionCreateStatement(input: input)).first
            case .update where write.purchases.isEmpty && write.issuedTokens.isEmpty && write.revokedTokenIDs.isEmpty && write.answer == nil:
                written = try await runner.runPrepared(NavigationWriteStatement(input: input)).first
            case .update:
                written = try await runner.runPrepared(ActionWriteStatement(input: input)).first
            }
        } catch let error as PostgresStoreError where error.isStaleFactsRefusal {
            return .stale(reason: error.failureSummary)
        } catch let error as PostgresStoreError where error.isUniqueViolation {
            return .stale(reason: "a token id is taken")
        }
        return written == 1 ? .written : .moved
    }
}
