import DatabaseAccess
import PostgresNIO
import Synchronization

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
    /// A write with no effect and no answer (most navigation): alone, or (the pool) with the
    /// others that arrive while earlier ones are under way.
    func writeNavigation(_ input: SessionStatements.WriteInput) async throws -> ActionWriteOutcome
}

extension PreparedStatementRunner {
    func writeNavigation(_ input: SessionStatements.WriteInput) async throws -> ActionWriteOutcome {
        try await SessionStatements.navigationAlone(input, on: self)
    }
}

extension PostgresStorage: PreparedStatementRunner {
    /// Through `navigationWrites`: a write that finds `Options.writeBatchLeaders` batches under
    /// way waits and goes in the next (`NavigationBatchStatement`).
    func writeNavigation(_ input: SessionStatements.WriteInput) async throws -> ActionWriteOutcome {
        try await navigationWrites.write(input, key: input.write.row.id) { inputs in await sendNavigation(inputs) }
    }

    /// One write alone (its own statement, as it always was), or several in one statement. A
    /// batch the server refuses (a deadlock with another instance's, say) is sent again one
    /// write at a time, so that one write's failure is only its own; a batch that fails for
    /// want of a server (no connection, the deadline) fails for all of them.
    func sendNavigation(_ inputs: [SessionStatements.WriteInput]) async -> [Result<ActionWriteOutcome, any Error>] {
        guard inputs.count > 1 else {
            return [await Self.result { try await SessionStatements.navigationAlone(inputs[0], on: self) }]
        }
        do {
            let statement = NavigationBatchStatement(inputs: inputs)
            var results = [Result<ActionWriteOutcome, any Error>](
                repeating: .failure(PostgresStoreError.undecodable(column: "n", type: "an outcome for every write of the batch")), count: inputs.count)
            for row in try await runPrepared(statement) { results[row.index] = .success(row.outcome) }
            return results
        } catch let error as PostgresStoreError where error.sqlState.map({ !["08", "57", "PD"].contains(String($0.prefix(2))) }) ?? false {
            logger.notice("a batch of navigation writes was refused; each is sent alone", metadata: ["writes": "\(inputs.count)", "error": "\(error.failureSummary)"])
            batchesRefused.add(1, ordering: .relaxed)
            var results: [Result<ActionWriteOutcome, any Error>] = []
            for input in inputs { results.append(await Self.result { try await SessionStatements.navigationAlone(input, on: self) }) }
            return results
        } catch {
            return Array(repeating: .failure(error), count: inputs.count)
        }
    }

    private static func result<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}

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
        switch write.kind {
        case .create:
            return try await outcome { try await runner.runPrepared(SessionCreateStatement(input: input)).first }
        case .update where write.purchases.isEmpty && write.issuedTokens.isEmpty && write.revokedTokenIDs.isEmpty && write.answer == nil:
            return try await runner.writeNavigation(input)
        case .update:
            return try await outcome { try await runner.runPrepared(ActionWriteStatement(input: input)).first }
        }
    }

    /// A navigation write in its own statement.
    static func navigationAlone(_ input: WriteInput, on runner: some PreparedStatementRunner) async throws -> ActionWriteOutcome {
        try await outcome { try await runner.runPrepared(NavigationWriteStatement(input: input)).first }
    }

    /// What a writing statement's answer (`written`: 1, or 0) or refusal means.
    private static func outcome(_ run: () async throws -> Int64?) async throws -> ActionWriteOutcome {
        let written: Int64?
        do {
            written = try await run()
        } catch let error as PostgresStoreError where error.isStaleFactsRefusal {
            return .stale(reason: error.failureSummary)
        } catch let error as PostgresStoreError where error.isUniqueViolation {
            return .stale(reason: "a token id is taken")
        }
        return written == 1 ? .written : .moved
    }
}
