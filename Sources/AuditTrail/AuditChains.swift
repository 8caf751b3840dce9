import DatabaseAccess
import Foundation
import PhotosModel

/// The audit trail's hash chains: contiguous `seq` per trail (a session, `operator` or `api`), a
/// hash chain per trail, appended to and read here; their heads are signed by checkpoints
/// (`AuditCheckpoints`) and their rows are the transparency log's leaves (`AuditLogTree`).
/// (Named `AuditLog` before 0.6: "log" is the transparency log's word now.)
///
/// Every write goes through an `AuditTrailWriter` (directly, or through `append`), inside the
/// caller's write transaction, so a step is recorded if and only if what it describes is
/// committed, and its `seq` is assigned in one place.
public enum AuditChains {
    /// Reserved session id for `photos-admin` commands that act on no live session.
    public static var operatorSession: String { AuditTrails.operatorSession }
    /// Reserved session id for the token API (sign-in, sign-out outside a session).
    public static var apiSession: String { AuditTrails.apiSession }
    /// `prev_hash` of a trail's first row.
    public static var genesisHash: String { AuditTrails.genesisHash }

    /// Appends `entries`, in order and all stamped `at`, to the trail `sessionID` (a session
    /// id, `operatorSession` or `apiSession`), and returns the rows as written.
    @discardableResult
    public static func append(_ entries: [AuditEntry], to sessionID: String, at: String, on connection: any DatabaseConnection) async throws -> [AuditRow] {
        guard !entries.isEmpty else { return [] }
        let trail = try await AuditTrailWriter(sessionID: sessionID, on: connection)
        for entry in entries { trail.record(entry) }
        return try await trail.write(at: at)
    }

    /// The PostgreSQL advisory lock every transaction that appends holds shared, and
    /// `settledNewestID` exclusively ("audit" in ASCII).
    public static var appendLockKey: Int64 { AuditRowValues.appendLockKey }

    /// The newest audit row id such that every row with an id up to it is settled: committed,
    /// or never to be. What a checkpoint covers, what `audit --follow` and the funnel marks have
    /// read up to, are ids below it.
    ///
    /// SQLite gives ids in commit order behind its one writer: the snapshot's newest id. On
    /// PostgreSQL an id is taken from a sequence before its transaction commits, so row 99 may
    /// become visible after row 100: every appending transaction holds `appendLockKey` shared
    /// (taken in `head`), and this takes it exclusively, which waits for the appends in flight
    /// to end (and holds new ones back until the caller's transaction ends). On PostgreSQL call
    /// it in a write transaction (READ COMMITTED: the statements after it see what those
    /// appends committed).
    public static func settledNewestID(on connection: any DatabaseConnection) async throws -> Int64 {
        try await connection.hold([.exclusive(.number(appendLockKey))])
        return try await connection.queryOne("SELECT coalesce(max(id), 0) AS newest FROM audit_events")?.int64("newest") ?? 0
    }

    /// Runs `body` on a read snapshot that holds every row up to the settled newest id, which
    /// it is given: on SQLite the snapshot's own newest id; on PostgreSQL the id is read first, in
    /// a short write transaction of its own (`settledNewestID`), whose exclusive lock is released
    /// at its commit — every row up to that id had committed by then, so the snapshot taken after
    /// it sees them all, while appends go on at once instead of waiting for `body`'s reads.
    public static func readSettled<T: Sendable>(
        _ database: any DatabaseStore, _ body: @escaping @Sendable (any DatabaseConnection, Int64) async throws -> T
    ) async throws -> T {
        guard database.writersRunConcurrently else {
            return try await database.read { connection in try await body(connection, try await settledNewestID(on: connection)) }
        }
        let settled = try await database.write { try await settledNewestID(on: $0) }
        return try await database.read { try await body($0, settled) }
    }

    /// A trail's head: its last `seq` (0 for a new trail) and the hash its next row chains to
    /// (`genesisHash` for a new trail).
    ///
    /// On PostgreSQL it first takes, for the rest of the transaction, the append lock (shared,
    /// see `settledNewestID`) and the trail's own lock, so that two instances appending to one
    /// trail (`api`, `operator`; a session's trail is already held by its row lock) take turns
    /// instead of both reading the same head. Different trails never wait for each other.
    public static func head(of sessionID: String, on connection: any DatabaseConnection) async throws -> (seq: Int, hash: String) {
        try await connection.hold([.shared(.number(appendLockKey)), .exclusive(.auditTrail(sessionID))])
        guard let row = try await connection.queryOne("SELECT seq, hash FROM audit_events WHERE session_id = \(sessionID) ORDER BY seq DESC LIMIT 1") else {
            // No live row: a trail whose rows all went to an archive goes on from its archived
            // head (`audit archive` may take the whole `operator` or `api` trail), else it is new.
            return try await archivedHead(of: sessionID, on: connection) ?? (0, genesisHash)
        }
        return (try row.int("seq"), try row.string("hash"))
    }

    /// Where a trail's archived part ends: the last seq and hash of its newest segment in
    /// `audit_archived_trails`, or nil when none of it was archived.
    public static func archivedHead(of trail: String, on connection: any DatabaseConnection) async throws -> (seq: Int, hash: String)? {
        try await connection.queryOne(
            "SELECT last_seq, last_hash FROM audit_archived_trails WHERE trail = \(trail) ORDER BY last_seq DESC LIMIT 1"
        ).map { (seq: try $0.int("last_seq"), hash: try $0.string("last_hash")) }
    }

    /// Inserts one trail's rows already chained (`AuditTrails.chain`), in the caller's
    /// transaction (`AuditRowValues.insert`: the columns' one definition).
    public static func insert(chained rows: [(record: AuditRecord, previousHash: String, hash: String)], on connection: any DatabaseConnection) async throws {
        try await AuditRowValues.insert(rows.map { AuditRowValues($0.record, previousHash: $0.previousHash, hash: $0.hash) }, on: connection)
    }

    /// Inserts one trail's rows, whose seqs are already assigned (by `AuditTrailWriter`), each
    /// chained to the one before it (the first to `previousHash`). Returns the new head's hash.
    public static func insert(_ rows: [AuditRecord], after previousHash: String, on connection: any DatabaseConnection) async throws -> String {
        let chained = AuditTrails.chain(rows, after: previousHash)
        try await insert(chained: chained, on: connection)
        return chained.last?.hash ?? previousHash
    }

    /// Rows of the `audit_trail` view, oldest first, at most `limit`: one session's after its
    /// `seq` `after`, or (no session) every session's after the row with id `after`.
    public static func rows(sessionID: String? = nil, after: Int = 0, limit: Int = 1_000, on connection: any DatabaseConnection) async throws -> [AuditRow] {
        guard let sessionID else {
            return try await rows(afterID: Int64(after), sessionID: nil, limit: limit, on: connection).map(\.row)
        }
        return try await connection.query(
            "\(trailRows) WHERE e.session_id = \(sessionID) AND e.seq > \(after) ORDER BY e.seq LIMIT \(limit)"
        ).map(Self.row)
    }

    /// The `audit_trail` view's rows with each row's id (`e.id`), to be filtered and ordered: the
    /// view's one definition in the code (migration 0011 defines the view itself the same way; the
    /// view has no id, which following the trail needs).
    static let trailRows: SQL = """
        SELECT e.session_id, e.seq, e.at, e.actor, coalesce(e.username, CASE WHEN u.erased_at IS NULL THEN u.username END) AS username,
               e.coordinator, e.step, e.screen, e.detail, e.id
        FROM audit_events e LEFT JOIN users u ON u.id = e.user_id
        """

    /// Rows after the row with id `afterID` (all sessions, or one), oldest first, with their ids:
    /// for following the trail as it grows. (The cast tells PostgreSQL the type of a NULL
    /// session id, which it cannot infer from `? IS NULL` alone.)
    public static func rows(afterID: Int64, sessionID: String?, limit: Int = 1_000, on connection: any DatabaseConnection) async throws -> [(id: Int64, row: AuditRow)] {
        let result = try await connection.query(
            "\(trailRows) WHERE e.id > \(afterID) AND (CAST(\(sessionID) AS TEXT) IS NULL OR e.session_id = \(sessionID)) ORDER BY e.id LIMIT \(limit)")
        return try result.map { (try $0.int64("id"), try Self.row($0)) }
    }

    static func row(_ row: Row) throws -> AuditRow {
        AuditRow(
            sessionId: try row.string("session_id"), seq: try row.int("seq"), at: try row.string("at"), actor: try row.string("actor"),
            username: try row.optionalString("username"), coordinator: try row.optionalString("coordinator"), step: try row.string("step"),
            screen: try row.optionalString("screen"), detail: try row.string("detail"))
    }

    /// The outcome of `verify`.
    public struct Verification: Sendable, Equatable {
        /// Rows read.
        public var rowsChecked: Int
        /// Checkpoints read.
        public var checkpointsChecked: Int = 0
        /// Leaves of the transparency log checked against their rows and the tree.
        public var logLeavesChecked: Int = 0
        /// Rows that name an erased user, and so show no name (`users erase`).
        public var redactedRows: Int = 0
        /// Of those, rows written before migration 0011 whose clear name was removed: their hash
        /// can no longer be recomputed, so the chain proves their place, not their content.
        public var redactedBeforeCommitments: Int = 0
        /// Archives this database has moved rows to (`audit archive`), finished.
        public var archives: Int = 0
        /// Rows those archives hold.
        public var archivedRows: Int = 0
        /// Of those archives, the files checked with the live rows (`--archive`).
        public var archivesChecked: Int = 0
        /// Rows read in those files.
        public var archiveRowsChecked: Int = 0
        /// Of the files checked, those whose statement is version 1 (written before migration
        /// 0019): their `sessions` table is not signed.
        public var archivesWithUnsignedSessions: [Int] = []
        /// An archive being written right now (its rows are moving), if any.
        public var archiveInProgress: Int?
        /// The checkpoints that rotated the signing key (`audit key --rotate`), oldest first.
        public var keyRotations: [Int] = []
        /// The key the chain of checkpoints ends at: the trusted key, or the last rotation's new
        /// key (nil without a trusted key).
        public var currentKey: AuditPublicKey?
        /// The head the key signed that the database's log does not extend, if any (then
        /// `problem` says so too).
        public var logFork: LogFork?
        /// The first thing that does not check out, if any.
        public var problem: Problem?
        /// True when nothing was found.
        public var isIntact: Bool { problem == nil }
    }

    /// A row, trail or checkpoint that does not check out.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// `audit_events.id` of the row, when the problem is a row.
        public var rowID: Int64?
        /// The trail (session id, `operator` or `api`), when known.
        public var sessionID: String?
        /// The row's seq, when the problem is a row.
        public var seq: Int?
        /// The checkpoint's number, when the problem is a checkpoint.
        public var checkpoint: Int?
        /// The archive's number, when the problem is an archive.
        public var archive: Int?
        /// What is wrong.
        public var reason: String

        public var description: String {
            var place: String
            if let rowID, let sessionID, let seq {
                place = "row id \(rowID) (session \(sessionID), seq \(seq))"
            } else if let checkpoint {
                place = "checkpoint \(checkpoint)"
            } else if let archive {
                place = "archive \(archive)"
            } else if let sessionID {
                place = "trail \(sessionID)"
            } else {
                place = "audit trail"
            }
            return "\(place): \(reason)"
        }
    }

    /// Re-reads the whole trail and its checkpoints (see `AuditVerifier`), inside the caller's
    /// read transaction. `publicKey` is the trusted key the checkpoints must be signed with (nil:
    /// checkpoints cannot be trusted, and their existence is a problem); `against`, an exported
    /// checkpoint the database must still hold.
    /// `progress` is told how many trail rows were checked, every 10,000.
    /// `archives`: archive files to check with the live rows as one history, opened with
    /// `openArchive` (read-only); `openScratch`, a scratch database that holds what the
    /// checkpoints signed instead of memory (see `CoveredHeads`).
    public static func verify(
        on connection: any DatabaseConnection, publicKey: AuditPublicKey? = nil, against: AuditCheckpoint? = nil,
        archives: [String] = [], openArchive: (@Sendable (String) throws -> any DatabaseConnection)? = nil,
        openScratch: (@Sendable () throws -> any DatabaseConnection)? = nil,
        progress: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Verification {
        var verifier = AuditVerifier(connection: connection, publicKey: publicKey, against: against, progress: progress)
        verifier.archivePaths = archives
        verifier.openArchive = openArchive
        verifier.openScratch = openScratch
        return try await verifier.run()
    }
}

extension AuditRowValues {
    /// `record` as written, chained to `previousHash` with its own `hash`.
    public init(_ record: AuditRecord, previousHash: String, hash: String) {
        self.init(
            sessionID: record.sessionID, seq: record.seq, at: record.at, actor: record.actor, userID: record.userID,
            username: record.username, coordinator: record.coordinator, step: record.step, screen: record.screen,
            detail: record.detail, previousHash: previousHash, hash: hash)
    }
}
