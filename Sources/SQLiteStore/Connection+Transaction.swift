import DatabaseAccess
import CSQLite
import Foundation

extension Connection {
    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Takes a read lock at the first read and a write lock at the first write.
        case deferred = "DEFERRED"
        /// Takes the write lock at once, so a write never fails half-way with `SQLITE_BUSY`.
        case immediate = "IMMEDIATE"
    }

    /// Runs `body` in a transaction: COMMIT if it returns, ROLLBACK if it throws.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try begin(kind)
        let result: T
        do {
            result = try body()
        } catch {
            throw rolledBack(after: error)
        }
        do {
            try execute("COMMIT")
        } catch {
            throw rolledBack(after: error)
        }
        return result
    }

    /// `BEGIN`, waiting for another connection's write lock at most the connection's busy
    /// timeout in all (`Options.busyTimeoutMilliseconds`, 5 s by default).
    ///
    /// SQLite's busy handler does the waiting. In a few cases SQLite returns `SQLITE_BUSY`
    /// without calling it; those are retried after a short sleep, each retry waiting only for
    /// what is left of the timeout, so the whole call returns or throws within about one busy
    /// timeout.
    public func begin(_ kind: TransactionKind = .immediate) throws {
        let sql: SQL = kind == .immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED"
        let deadline = ContinuousClock.now + .milliseconds(busyTimeoutMilliseconds)
        defer { setBusyTimeout(busyTimeoutMilliseconds) }
        while true {
            do {
                try execute(sql)
                return
            } catch let error as SQLiteError where error.isBusy {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .milliseconds(1) else { throw error }
                let pause = min(remaining / 2, .milliseconds(20))
                usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
                let left = deadline - ContinuousClock.now
                setBusyTimeout(Int32(max(1, left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000)))
            }
        }
    }

    /// Rolls back the open transaction, if SQLite has not already done so. Throws when the
    /// rollback fails: the connection may then still be in its transaction, and must not be
    /// used as if it were not.
    public func rollbackIfOpen() throws {
        if !isAutocommit { try execute("ROLLBACK") }
    }

    /// What to throw after `error` ended a transaction: `error` once the transaction is rolled
    /// back, or — when the rollback fails too — the rollback's failure, which names `error`
    /// (a failed rollback is a storage failure: the writer opens a new connection after one).
    public func rolledBack(after error: any Error) -> any Error {
        do {
            try rollbackIfOpen()
            return error
        } catch let failure as SQLiteError {
            return SQLiteError(resultCode: failure.resultCode, message: "\(failure.message); rolling back after: \(error)", sql: failure.sql)
        } catch {
            return error
        }
    }

    /// Undoes a savepoint's writes after `error` and ends it; `error`, or the failure to undo them.
    private func rolledBack(to name: String, after error: any Error) -> any Error {
        guard !isAutocommit else { return error }
        do {
            try execute("ROLLBACK TO \"\(raw: name)\"")
            try execute("RELEASE \"\(raw: name)\"")
            return error
        } catch let failure as SQLiteError {
            return SQLiteError(resultCode: failure.resultCode, message: "\(failure.message); rolling back to \(name) after: \(error)", sql: failure.sql)
        } catch {
            return error
        }
    }

    /// Runs `body` inside `SAVEPOINT name`: released if it returns, rolled back to if it throws,
    /// so a failed step undoes only its own writes and leaves the enclosing transaction usable.
    @discardableResult
    public func savepoint<T>(_ name: String = "step", _ body: () throws -> T) throws -> T {
        try execute("SAVEPOINT \"\(raw: name)\"")
        do {
            let result = try body()
            try execute("RELEASE \"\(raw: name)\"")
            return result
        } catch {
            throw rolledBack(to: name, after: error)
        }
    }

    /// `transaction` for an `async` body (a reader's or a service's closure): the same, awaited.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () async throws -> T) async throws -> T {
        try begin(kind)
        let result: T
        do {
            result = try await body()
        } catch {
            throw rolledBack(after: error)
        }
        do {
            try execute("COMMIT")
        } catch {
            throw rolledBack(after: error)
        }
        return result
    }

    /// `savepoint` for an `async` body (a request in the writer's batch): the same, awaited.
    @discardableResult
    public func savepoint<T>(_ name: String = "step", _ body: () async throws -> T) async throws -> T {
        try execute("SAVEPOINT \"\(raw: name)\"")
        do {
            let result = try await body()
            try execute("RELEASE \"\(raw: name)\"")
            return result
        } catch {
            throw rolledBack(to: name, after: error)
        }
    }
}
