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
            rollbackIfOpen()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollbackIfOpen()
            throw error
        }
        return result
    }

    /// `BEGIN` with the busy timeout, retried a few more times if another process still holds
    /// the write lock after it (a long `photos-admin` import, say).
    public func begin(_ kind: TransactionKind = .immediate) throws {
        var attempt = 0
        while true {
            do {
                try execute(kind == .immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
                return
            } catch let error as SQLiteError where error.isBusy && attempt < 5 {
                attempt += 1
                usleep(UInt32(20_000 * attempt))
            }
        }
    }

    /// Rolls back the open transaction, if SQLite has not already done so.
    public func rollbackIfOpen() {
        if !isAutocommit { _ = try? execute("ROLLBACK") }
    }

    /// Runs `body` inside `SAVEPOINT name`: released if it returns, rolled back to if it throws,
    /// so a failed step undoes only its own writes and leaves the enclosing transaction usable.
    @discardableResult
    public func savepoint<T>(_ name: String = "step", _ body: () throws -> T) throws -> T {
        try execute("SAVEPOINT \"\(name)\"")
        do {
            let result = try body()
            try execute("RELEASE \"\(name)\"")
            return result
        } catch {
            if !isAutocommit {
                _ = try? execute("ROLLBACK TO \"\(name)\"")
                _ = try? execute("RELEASE \"\(name)\"")
            }
            throw error
        }
    }
}
