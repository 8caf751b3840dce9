import DatabaseAccess

/// The action contract on SQLite: the read on a reader's snapshot, the write inside the
/// writer's transaction, where every check is a statement in this process (no round trip) and
/// nothing can move between the check and the write: the one writer runs one transaction at a
/// time.
extension SQLiteDatabase {
    public func readForAction(_ read: ActionRead) async throws -> ActionSnapshot {
        try await self.read { connection in try await SQLiteSessionActions(connection).readForAction(read) }
    }

    public func writeDecision(_ write: ActionWrite) async throws -> ActionWriteOutcome {
        do {
            return try await self.write { connection in
                let outcome = try await SQLiteSessionActions(connection).writeDecision(write)
                // A refusal is rolled back (the request's savepoint), not committed empty, so the
                // writer counts only commits that hold.
                if outcome == .moved || outcome.isStale { throw StaleWrite(outcome: outcome) }
                return outcome
            }
        } catch let refused as StaleWrite {
            return refused.outcome
        }
    }

    /// The writer's transaction: nothing else writes while it runs. Each write there runs under
    /// a savepoint of its own (`SQLiteSessionActionsInSavepoints`).
    public func withSessionLocked<T: Sendable>(_ sessionID: String, _ body: @escaping @Sendable (any SessionActions) async throws -> T) async throws -> T {
        try await self.write { connection in try await body(SQLiteSessionActionsInSavepoints(connection)) }
    }

    public func pruneAnswers(storedAtOrBefore cutoff: String) async throws -> Int {
        try await self.write { connection in try await connection.execute("DELETE FROM idempotency_keys WHERE created_at <= \(cutoff)") }
    }
}
