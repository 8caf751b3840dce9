import DatabaseAccess
import PostgresNIO

/// The action contract on PostgreSQL: the read and the write each one statement, one round trip
/// (`SessionStatements`), no transaction held open between them and no row locked; several
/// instances decide on one session at once, and the write's conditions let only one of them
/// keep what it decided.
extension PostgresStorage {
    public func readForAction(_ read: ActionRead) async throws -> ActionSnapshot {
        guard let snapshot = try await runPrepared(ActionReadStatement(read: read)).first else {
            throw PostgresStoreError.undecodable(column: "the action's read", type: "one row")
        }
        return snapshot
    }

    public func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome {
        let input = SessionStatements.WriteInput(write)
        let written: Int64?
        do {
            switch write.kind {
            case .create:
                written = try await runPrepared(SessionCreateStatement(input: input)).first
            case .update where write.purchases.isEmpty && write.issuedTokens.isEmpty && write.revokedTokenIDs.isEmpty && write.answer == nil:
                written = try await runPrepared(NavigationWriteStatement(input: input)).first
            case .update:
                written = try await runPrepared(ActionWriteStatement(input: input)).first
            }
        } catch let error as PostgresStoreError where error.isStaleFactsRefusal {
            return .stale(reason: error.failureSummary)
        } catch let error as PostgresStoreError where error.isUniqueViolation {
            return .stale(reason: "a token id is taken")
        }
        return written == 1 ? .written : .moved
    }

    /// A transaction with the session's row locked (`FOR UPDATE`) until it ends: other
    /// instances' writes of this session wait for it. The contract runs in plain statements
    /// there, each write under a savepoint (`SessionActionsInSavepoints`).
    public func withSessionLocked<T: Sendable>(_ sessionID: String, _ body: @escaping @Sendable (any SessionActions) async throws -> T) async throws -> T {
        try await self.write { connection in
            _ = try await connection.query("SELECT 1 FROM sessions WHERE id = ? FOR UPDATE", sessionID)
            return try await body(SessionActionsInSavepoints(connection))
        }
    }

    public func pruneAnswers(storedAtOrBefore cutoff: String) async throws -> Int {
        try await self.write { connection in try await connection.execute("DELETE FROM idempotency_keys WHERE created_at <= ?", cutoff) }
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
