import Foundation
import PhotosModel
import SQLiteStore

/// The sign-in limit kept in the database (`sign_in_attempts`), so that several `photosd`
/// instances on one PostgreSQL database count one username's failures together: at most
/// `maxAttempts` failed sign-ins per username in the window, wherever they were tried.
///
/// Like `SignInLimiter`, an attempt takes its place before bcrypt runs (a `checking` row) and
/// then becomes a failure or goes away, so concurrent attempts on all instances cannot all pass
/// the count. The count-then-insert runs under a transaction-scoped advisory lock per username.
/// A `checking` row older than `staleCheckSeconds` is from an instance that stopped mid-check
/// and no longer counts.
final class SharedSignInLimiter: Sendable {
    let database: any DatabaseStore
    let maxAttempts: Int
    let window: TimeInterval
    let now: @Sendable () -> Date
    let staleCheckSeconds: TimeInterval = 60

    init(database: any DatabaseStore, maxAttempts: Int, windowSeconds: Int, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.maxAttempts = maxAttempts
        self.window = TimeInterval(windowSeconds)
        self.now = now
    }

    /// Takes a place for one password check of `username` (returns its row id), or throws
    /// `too_many_attempts` when recent failures and checks in flight already reach the limit.
    func begin(_ username: String) async throws -> Int64 {
        let key = SignInLimiter.key(username)
        let at = now()
        let (maxAttempts, window, stale) = (self.maxAttempts, self.window, staleCheckSeconds)
        return try await database.write { connection in
            if connection.dialect == .postgres {
                try connection.execute("SELECT pg_advisory_xact_lock(hashtextextended('sign-in ' || ?, 0))", key)
            }
            try connection.execute(
                "DELETE FROM sign_in_attempts WHERE username_key = ? AND ((state = 'failed' AND at <= ?) OR (state = 'checking' AND at <= ?))",
                key, ISO8601Timestamp.string(from: at.addingTimeInterval(-window)), ISO8601Timestamp.string(from: at.addingTimeInterval(-stale)))
            let counted = try connection.query("SELECT state, at FROM sign_in_attempts WHERE username_key = ? ORDER BY at", key)
            if counted.count >= maxAttempts {
                let oldestFailure = counted.first { $0.string(0) == "failed" }.flatMap { ISO8601Timestamp.date(from: $0.string(1)) }
                let wait = oldestFailure.map { Int($0.addingTimeInterval(window).timeIntervalSince(at).rounded(.up)) } ?? 1
                throw PhotosError(.tooManyAttempts, "too many failed sign-ins for this username; try again in \(max(wait, 1)) s", retryAfter: max(wait, 1))
            }
            return try connection.queryOne(
                "INSERT INTO sign_in_attempts (username_key, state, at) VALUES (?, 'checking', ?) RETURNING id",
                key, ISO8601Timestamp.string(from: at))?.int64(0) ?? 0
        }
    }

    /// Ends an attempt: a failure is counted; a success forgets the username's failures. A
    /// storage failure here loses at most this attempt's mark (its place expires by itself).
    func finish(_ id: Int64, username: String, _ outcome: SignInLimiter.Outcome) async {
        let key = SignInLimiter.key(username)
        let at = ISO8601Timestamp.string(from: now())
        _ = try? await database.write { connection in
            switch outcome {
            case .succeeded:
                try connection.execute("DELETE FROM sign_in_attempts WHERE id = ? OR (username_key = ? AND state = 'failed')", id, key)
            case .abandoned:
                try connection.execute("DELETE FROM sign_in_attempts WHERE id = ?", id)
            case .failed:
                try connection.execute("UPDATE sign_in_attempts SET state = 'failed', at = ? WHERE id = ?", at, id)
            }
        }
    }
}
