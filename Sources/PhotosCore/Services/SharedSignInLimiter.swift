import DatabaseAccess
import Foundation
import PhotosModel

/// The sign-in limits (`SignInLimits`) kept in the database (`sign_in_attempts`,
/// `sign_in_trusted_addresses`), so that several `photosd` instances on one PostgreSQL database
/// count failures together: per (username, address), per address and per username, wherever
/// they were tried.
///
/// Like `SignInLimiter`, an attempt takes its place before bcrypt runs (a `checking` row) and
/// then becomes a failure or goes away, so concurrent attempts on all instances cannot all pass
/// the count. The count-then-insert runs under two transaction-scoped advisory locks, the
/// address's and then the username's (always in that order, so two attempts cannot wait on each
/// other). A `checking` row older than `staleCheckSeconds` is from an instance that stopped
/// mid-check and no longer counts.
final class SharedSignInLimiter: Sendable {
    let database: any DatabaseStore
    let limits: SignInLimits
    let now: @Sendable () -> Date
    let staleCheckSeconds: TimeInterval = 60

    init(database: any DatabaseStore, limits: SignInLimits, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.limits = limits
        self.now = now
    }

    /// Takes a place for one password check of `username` from `address` (returns its row id),
    /// or throws `SignInRefused` when recent failures and checks in flight reach a limit.
    func takePlace(username: String, address: String) async throws -> Int64 {
        let user = SignInLimits.usernameKey(username)
        let place = SignInLimits.addressKey(address)
        let at = now()
        let limits = self.limits
        let window = TimeInterval(limits.windowSeconds)
        let cutoff = ISO8601Timestamp.string(from: at.addingTimeInterval(-window))
        let staleBefore = ISO8601Timestamp.string(from: at.addingTimeInterval(-staleCheckSeconds))
        let trustedSince = ISO8601Timestamp.string(from: at.addingTimeInterval(-TimeInterval(limits.trustedAddressSeconds)))
        return try await database.write { connection in
            // Address first, then username, in every transaction: no lock cycle.
            try await connection.hold([.exclusive(.signInAddress(place)), .exclusive(.signInUsername(user))])
            try await connection.execute(
                """
                DELETE FROM sign_in_attempts WHERE (username_key = \(user) OR address = \(place))
                AND ((state = 'failed' AND at <= \(cutoff)) OR (state = 'checking' AND at <= \(staleBefore)))
                """)
            let trusted = try await connection.queryOne(
                "SELECT 1 FROM sign_in_trusted_addresses WHERE username_key = \(user) AND address = \(place) AND at > \(trustedSince)") != nil
            // What counts, per limit: the failures and checks in flight, and the oldest failure
            // (when it leaves the window, a place frees).
            let counted = try await connection.query(
                "SELECT username_key, address, state, at FROM sign_in_attempts WHERE username_key = \(user) OR address = \(place) ORDER BY at")
            let refused = try limits.refusal(trusted: trusted, at: at) { which in
                let rows = try counted.filter { row in
                    switch which {
                    case .usernameAndAddress: try row.string("username_key") == user && row.string("address") == place
                    case .address: try row.string("address") == place
                    case .username: try row.string("username_key") == user
                    }
                }
                let oldestFailure = try rows.first { try $0.string("state") == "failed" }.flatMap { ISO8601Timestamp.date(from: try $0.string("at")) }
                return SignInLimits.Tally(counted: rows.count, oldestFailure: oldestFailure)
            }
            if let refused { throw refused }
            return try await connection.queryOne(
                "INSERT INTO sign_in_attempts (username_key, address, state, at) VALUES (\(user), \(place), 'checking', \(ISO8601Timestamp.string(from: at))) RETURNING id")?.int64("id") ?? 0
        }
    }

    /// Ends an attempt: a failure is counted; a success forgets this username's failures from
    /// this address and trusts the address for the username. A storage failure here loses at
    /// most this attempt's mark (its place expires by itself).
    func finish(_ id: Int64, username: String, address: String, _ outcome: SignInLimiter.Outcome) async {
        let user = SignInLimits.usernameKey(username)
        let place = SignInLimits.addressKey(address)
        let now = self.now()
        let at = ISO8601Timestamp.string(from: now)
        let expired = ISO8601Timestamp.string(from: now.addingTimeInterval(-TimeInterval(limits.trustedAddressSeconds)))
        _ = try? await database.write { connection in
            switch outcome {
            case .succeeded:
                try await connection.execute(
                    "DELETE FROM sign_in_attempts WHERE id = \(id) OR (username_key = \(user) AND address = \(place) AND state = 'failed')")
                try await connection.execute(
                    """
                    INSERT INTO sign_in_trusted_addresses (username_key, address, at) VALUES (\(user), \(place), \(at))
                    ON CONFLICT (username_key, address) DO UPDATE SET at = excluded.at
                    """)
                try await connection.execute("DELETE FROM sign_in_trusted_addresses WHERE username_key = \(user) AND at <= \(expired)")
            case .abandoned:
                try await connection.execute("DELETE FROM sign_in_attempts WHERE id = \(id)")
            case .failed:
                try await connection.execute("UPDATE sign_in_attempts SET state = 'failed', at = \(at) WHERE id = \(id)")
            }
        }
    }
}
