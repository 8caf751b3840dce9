import AuditTrail
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

    /// Where the sessions walk is: the last session it read, by the order of the index it walks.
    public struct Cursor: Sendable, Equatable {
        var createdAt: String
        var id: String

        /// Before every session.
        public static let start = Cursor(createdAt: "", id: "")
    }

    /// One page of the sessions walk: of the (at most `limit`) live sessions created at or before
    /// `cutoff`, after `cursor` in (created_at, id) order, those last written at or before it; and
    /// where the next page starts (nil when the walk is over). A session idle past the cutoff was
    /// created before it and has not ended, so the walk reads the partial index
    /// `sessions_live_by_created` (0018) and nothing else: ended sessions and new ones cost the
    /// sweep nothing, however many are kept. `updated_at`, which every action changes, has no
    /// index, so the hot path pays nothing for the sweep.
    public func page(idleBefore cutoff: Date, after cursor: Cursor, limit: Int) async throws -> (idle: [String], next: Cursor?) {
        let cutoffText = ISO8601Timestamp.string(from: cutoff)
        let rows = try await database.read { connection in
            try await connection.query(Self.pageQuery(cutoff: cutoffText, after: cursor, limit: limit)).map { (id: try $0.string("id"), createdAt: try $0.string("created_at"), idle: try $0.int("idle") == 1) }
        }
        let next = rows.count == limit ? rows.last.map { Cursor(createdAt: $0.createdAt, id: $0.id) } : nil
        return (rows.filter(\.idle).map(\.id), next)
    }

    /// A page of the walk: sessions created at or before `cutoff` after `cursor`, at most `limit`.
    public static func pageQuery(cutoff: String, after cursor: Cursor, limit: Int) -> SQL {
        """
        SELECT id, created_at, CASE WHEN updated_at <= \(cutoff) THEN 1 ELSE 0 END AS idle FROM sessions
        WHERE ended_at IS NULL AND created_at <= \(cutoff)
          AND (created_at > \(cursor.createdAt) OR (created_at = \(cursor.createdAt) AND id > \(cursor.id)))
        ORDER BY created_at, id LIMIT \(limit)
        """
    }

    /// The pruning's deletes (tokens expired before `now`, sign-in attempts before `attempts`,
    /// trusted addresses before `trusted`), each reading through an index on the time it
    /// compares (0018).
    public static func pruneQueries(now: String, attempts: String, trusted: String) -> [SQL] {
        [
            "DELETE FROM tokens WHERE expires_at < \(now)",
            "DELETE FROM sign_in_attempts WHERE at < \(attempts)",
            "DELETE FROM sign_in_trusted_addresses WHERE at < \(trusted)",
        ]
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
            let deletes = Self.pruneQueries(now: nowText, attempts: attempts, trusted: trusted)
            pruned.tokens = try await connection.execute(deletes[0])
            pruned.signInAttempts = try await connection.execute(deletes[1])
            pruned.trustedAddresses = try await connection.execute(deletes[2])
            return pruned
        }
    }
}
