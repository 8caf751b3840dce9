import DatabaseAccess
import Foundation
import PhotosModel

/// The SQL of photosd's periodic sweep: who runs it now, which sessions are idle, and the rows
/// past their windows. Ending a session is the session coordinator's (it writes the step).
public struct SessionSweep: Sendable {
    let database: any DatabaseStore
    /// The lease's name in `maintenance_leases`.
    public static let lease = "session-sweep"

    /// Creates the sweep's queries over `database`.
    public init(database: any DatabaseStore) {
        self.database = database
    }

    /// Takes (or keeps) the sweep's lease for `holder` until `until`, if no other holder has it
    /// now; true when `holder` holds it. One instance at a time sweeps (PostgreSQL: several
    /// instances share the database; SQLite: one process, the lease is always free).
    public func takeLease(holder: String, now: Date, until: Date) async throws -> Bool {
        try await MaintenanceLease(database: database, name: Self.lease).take(holder: holder, now: now, until: until)
    }

    /// One page of the sessions walk: of the (at most `limit`) sessions with ids after
    /// `afterID`, in id order, those live and last written at or before `cutoff`; and the page's last
    /// id (nil when the walk is over). The sweep walks the primary key: there is no index on
    /// `updated_at`, which every action changes, so the hot path pays nothing for the sweep.
    public func page(idleBefore cutoff: Date, afterID: String, limit: Int) async throws -> (idle: [String], last: String?) {
        let cutoffText = ISO8601Timestamp.string(from: cutoff)
        let rows = try await database.read { connection in
            try await connection.query(
                "SELECT id, CASE WHEN ended_at IS NULL AND updated_at <= ? THEN 1 ELSE 0 END FROM sessions WHERE id > ? ORDER BY id LIMIT ?",
                cutoffText, afterID, limit
            ).map { (try $0.string(0), try $0.int(1) == 1) }
        }
        return (rows.filter(\.1).map(\.0), rows.count == limit ? rows.last?.0 : nil)
    }

    /// What the sweep pruned.
    public struct Pruned: Sendable, Equatable {
        /// Tokens past their expiry.
        public var tokens = 0
        public var signInAttempts = 0
        public var trustedAddresses = 0

        /// Counts of rows pruned.
        public init(tokens: Int = 0, signInAttempts: Int = 0, trustedAddresses: Int = 0) {
            self.tokens = tokens
            self.signInAttempts = signInAttempts
            self.trustedAddresses = trustedAddresses
        }
    }

    /// Deletes tokens past their expiry, sign-in attempts older than `signInWindow`, and trusted
    /// addresses older than `trustedFor`: nothing reads them after that.
    public func prune(now: Date, signInWindow: TimeInterval, trustedFor: TimeInterval) async throws -> Pruned {
        let nowText = ISO8601Timestamp.string(from: now)
        let attempts = ISO8601Timestamp.string(from: now.addingTimeInterval(-signInWindow))
        let trusted = ISO8601Timestamp.string(from: now.addingTimeInterval(-trustedFor))
        return try await database.write { connection in
            var pruned = Pruned()
            pruned.tokens = try await connection.execute("DELETE FROM tokens WHERE expires_at < ?", nowText)
            pruned.signInAttempts = try await connection.execute("DELETE FROM sign_in_attempts WHERE at < ?", attempts)
            pruned.trustedAddresses = try await connection.execute("DELETE FROM sign_in_trusted_addresses WHERE at < ?", trusted)
            return pruned
        }
    }
}
