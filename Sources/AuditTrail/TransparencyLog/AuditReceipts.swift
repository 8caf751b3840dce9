import DatabaseAccess
import Foundation
import PhotosModel

/// Making receipts (`AuditReceipt`) and reading the log's checkpoints and proofs, for the HTTP
/// API (`/v1/sessions/{id}/receipt`, `/v1/log/…`) and `photos-admin audit prove`.
public enum AuditReceipts {
    /// A receipt, or why there is none yet.
    public enum Outcome: Sendable {
        case receipt(AuditReceipt)
        /// The session's newest row is not in a checkpoint yet: ask again after the next one.
        case pending
        /// No rows for the session (never existed, or archived: `audit prove --archive`).
        case notFound
        /// The trail's newest row is not the head the session recorded (rows deleted from its
        /// end): no receipt, never a shorter one that would check.
        case notIntact(TrailNotIntact)
    }

    /// A trail that ends before the head its session recorded.
    public struct TrailNotIntact: Sendable, Equatable, CustomStringConvertible {
        public var sessionID: String
        /// The newest row's seq in the trail (0: none).
        public var newestSeq: Int
        /// The seq the session's row says its trail ends at.
        public var recordedSeq: Int

        public var description: String {
            "the audit trail of session \(sessionID) ends at seq \(newestSeq), but the session recorded its head at seq \(recordedSeq) "
                + "(rows were removed or altered): no receipt is served; photos-admin audit verify names the damage"
        }
    }

    /// What a live session's receipt depends on: the head its session row recorded and the
    /// checkpoint served (`AuditCosignatures.served`) with its cosignatures. While these stay,
    /// the receipt built at them is the receipt.
    public struct Stamp: Hashable, Sendable {
        public var trailSeq: Int
        public var trailHash: String
        public var checkpoint: Int64
        public var cosignatures: Int

        /// A stamp.
        public init(trailSeq: Int, trailHash: String, checkpoint: Int64, cosignatures: Int = 0) {
            self.trailSeq = trailSeq
            self.trailHash = trailHash
            self.checkpoint = checkpoint
            self.cosignatures = cosignatures
        }
    }

    /// `sessionID`'s stamp, in two cheap reads; nil for a session without a row (archived).
    public static func stamp(sessionID: String, witnessed policy: WitnessPolicy? = nil, on connection: any DatabaseConnection) async throws -> Stamp? {
        guard let row = try await connection.queryOne("SELECT trail_seq, trail_hash FROM sessions WHERE id = \(sessionID)") else { return nil }
        let served = try await AuditCosignatures.served(policy, on: connection)
        return Stamp(
            trailSeq: try row.int("trail_seq"), trailHash: try row.string("trail_hash"), checkpoint: served?.number ?? 0, cosignatures: served?.cosignatures ?? 0)
    }

    /// The newest checkpoint that signed the log (size and note), in the caller's snapshot.
    public static func newestSignedTree(on connection: any DatabaseConnection) async throws -> (size: Int64, note: String)? {
        guard let row = try await connection.queryOne(
            "SELECT tree_size, note FROM audit_checkpoints WHERE note IS NOT NULL ORDER BY number DESC LIMIT 1") else { return nil }
        return (try row.int64("tree_size"), try row.string("note"))
    }

    /// The signed notes of the key rotations (`audit key --rotate`), oldest first: each carries
    /// `key <new verifier key>` and is signed by the old and the new key, so whoever trusts the
    /// first key can follow the chain to the newest (`GET /v1/log/rotations`).
    public static func rotationNotes(on connection: any DatabaseConnection) async throws -> [String] {
        try await connection.query(
            "SELECT note FROM audit_checkpoints WHERE next_public_key IS NOT NULL AND note IS NOT NULL ORDER BY number"
        ).map { try $0.string("note") }
    }

    /// Which rows of a trail a receipt holds: at most `maxRows` from `fromSeq`, or (no `fromSeq`)
    /// the newest `maxRows`.
    public struct Range: Sendable, Equatable {
        /// The first row's seq (nil: the newest `maxRows` rows).
        public var fromSeq: Int?
        /// `receipts.maxRows`.
        public var maxRows: Int

        /// The newest 1,000 rows.
        public static let newest = Range(fromSeq: nil, maxRows: 1_000)

        /// A range.
        public init(fromSeq: Int?, maxRows: Int) {
            self.fromSeq = fromSeq
            self.maxRows = max(1, maxRows)
        }

        /// The first seq for a trail whose newest row is `newestSeq`.
        func first(newestSeq: Int) -> Int {
            fromSeq ?? max(1, newestSeq - maxRows + 1)
        }
    }

    /// `fromSeq` is past the trail's newest row.
    public struct PastTheEnd: Error, Sendable, Equatable, CustomStringConvertible {
        public var fromSeq: Int
        public var newestSeq: Int
        public var description: String { "fromSeq \(fromSeq) is past the trail's newest row (seq \(newestSeq))" }
    }

    /// The receipt of the live session `sessionID`, rows `range`, read in the caller's snapshot.
    /// Throws `PastTheEnd` when `range.fromSeq` is past the newest row.
    public static func receipt(
        sessionID: String, range: Range = .newest, witnessed policy: WitnessPolicy? = nil, on connection: any DatabaseConnection
    ) async throws -> Outcome {
        // Served only for a trail that ends where its session says (in this snapshot): whoever
        // deletes a trail's newest rows must not get a shorter receipt that checks.
        guard let newest = try await connection.queryOne(
            "SELECT seq, hash FROM audit_events WHERE session_id = \(sessionID) ORDER BY seq DESC LIMIT 1") else {
            if let head = try await connection.queryOne("SELECT trail_seq FROM sessions WHERE id = \(sessionID)"), try head.int("trail_seq") > 0 {
                return .notIntact(TrailNotIntact(sessionID: sessionID, newestSeq: 0, recordedSeq: try head.int("trail_seq")))
            }
            return .notFound
        }
        let newestSeq = try newest.int("seq")
        if let head = try await connection.queryOne("SELECT trail_seq, trail_hash FROM sessions WHERE id = \(sessionID)") {
            let recordedSeq = try head.int("trail_seq")
            let newestHash = try newest.string("hash"), recordedHash = try head.string("trail_hash")
            if recordedSeq > 0, newestSeq != recordedSeq || newestHash != recordedHash {
                return .notIntact(TrailNotIntact(sessionID: sessionID, newestSeq: newestSeq, recordedSeq: recordedSeq))
            }
        }
        let first = range.first(newestSeq: newestSeq)
        guard first <= newestSeq else { throw PastTheEnd(fromSeq: first, newestSeq: newestSeq) }
        let rows = try await connection.query(
            """
            SELECT e.session_id, e.seq, e.at, e.actor, e.user_id, e.username, e.coordinator, e.step, e.screen, e.detail, e.hash, e.prev_hash,
                   \(raw: AuditLogTree.logIndexColumn) AS log_index,
                   CASE WHEN EXISTS (SELECT 1 FROM audit_redactions r WHERE r.event_id = e.id) THEN 1 ELSE 0 END AS redacted
            FROM audit_events e
            WHERE e.session_id = \(sessionID) AND e.seq >= \(first) ORDER BY e.seq LIMIT \(range.maxRows)
            """
        ).map { row in
            (row: try receiptRow(row, redacted: try row.int("redacted") == 1), logIndex: try row.optionalInt64("log_index"), previousHash: try row.string("prev_hash"))
        }
        guard let firstRow = rows.first, let last = rows.last else { return .notFound }
        return try await outcome(
            sessionID: sessionID, previousHash: firstRow.row.seq > 1 ? firstRow.previousHash : nil, rows: rows.map(\.row), newestIndex: last.logIndex,
            witnessed: policy, log: connection)
    }

    /// A receipt row from a row of `audit_events` (columns by their names there).
    static func receiptRow(_ row: DatabaseAccess.Row, redacted: Bool) throws -> AuditReceipt.Row {
        AuditReceipt.Row(
            seq: try row.int("seq"), hash: try row.string("hash"),
            content: redacted ? nil : AuditReceipt.Row.Content(
                sessionId: try row.string("session_id"), at: try row.string("at"), actor: try row.string("actor"),
                userId: try row.optionalInt64("user_id"), username: try row.optionalString("username"),
                coordinator: try row.optionalString("coordinator"), step: try row.string("step"),
                screen: try row.optionalString("screen"), detail: try row.string("detail")))
    }

    /// One session's rows in an archive file, with their row ids (their leaves are found by id).
    public struct ArchivedRows: Sendable {
        var rows: [(id: Int64, row: AuditReceipt.Row, previousHash: String)]
    }

    /// `sessionID`'s rows `range` in the archive file `archive`. Throws `PastTheEnd` when
    /// `range.fromSeq` is past the newest row.
    public static func archivedRows(sessionID: String, range: Range = .newest, archive: any DatabaseConnection) async throws -> ArchivedRows {
        guard let newestSeq = try await archive.queryOne("SELECT max(seq) AS newest FROM audit_events WHERE session_id = \(sessionID)")?.optionalInt("newest") else {
            return ArchivedRows(rows: [])
        }
        let first = range.first(newestSeq: newestSeq)
        guard first <= newestSeq else { throw PastTheEnd(fromSeq: first, newestSeq: newestSeq) }
        // An archive keeps its redactions in its own audit_redactions (AuditArchive's schema).
        return ArchivedRows(rows: try await archive.query(
            """
            SELECT e.id, e.session_id, e.seq, e.at, e.actor, e.user_id, e.username, e.coordinator, e.step, e.screen, e.detail, e.hash, e.prev_hash,
                   CASE WHEN EXISTS (SELECT 1 FROM audit_redactions r WHERE r.event_id = e.id) THEN 1 ELSE 0 END AS redacted
            FROM audit_events e WHERE e.session_id = \(sessionID) AND e.seq >= \(first) ORDER BY e.seq LIMIT \(range.maxRows)
            """
        ).map { row in
            (id: try row.int64("id"), row: try receiptRow(row, redacted: try row.int("redacted") == 1), previousHash: try row.string("prev_hash"))
        })
    }

    /// The receipt of `sessionID` from its rows in an archive file, proven against the live
    /// database's log (`log`), which keeps the leaves of archived rows.
    public static func receipt(sessionID: String, archived: ArchivedRows, witnessed policy: WitnessPolicy? = nil, log: any DatabaseConnection) async throws -> Outcome {
        guard let first = archived.rows.first, let last = archived.rows.last else { return .notFound }
        let indexes = try await AuditLogTree.logIndexes(of: [last.id], on: log)
        return try await outcome(
            sessionID: sessionID, previousHash: first.row.seq > 1 ? first.previousHash : nil, rows: archived.rows.map(\.row), newestIndex: indexes[last.id],
            witnessed: policy, log: log)
    }

    private static func outcome(
        sessionID: String, previousHash: String?, rows: [AuditReceipt.Row], newestIndex: Int64?, witnessed policy: WitnessPolicy?,
        log connection: any DatabaseConnection
    ) async throws -> Outcome {
        guard !rows.isEmpty else { return .notFound }
        // With witnesses, the newest checkpoint with its quorum of cosignatures: pending until then.
        guard let index = newestIndex, let tree = try await AuditCosignatures.served(policy, on: connection), index < tree.size else { return .pending }
        let proof = try await AuditLogTree.inclusionProof(index: index, size: tree.size, on: connection)
        return .receipt(AuditReceipt(
            sessionId: sessionID, previousHash: previousHash, rows: rows,
            inclusion: AuditReceipt.Inclusion(logIndex: index, treeSize: tree.size, hashes: proof.map { Data($0).base64EncodedString() }),
            checkpoint: tree.note))
    }

    /// The consistency proof between two sizes of the log, each at most the newest signed
    /// checkpoint's (so that both are sizes someone may hold a checkpoint of).
    public static func consistency(from old: Int64, to new: Int64, on connection: any DatabaseConnection) async throws -> [MerkleTree.Hash] {
        let signed = try await newestSignedTree(on: connection)?.size ?? 0
        guard old >= 1, old <= new else { throw PhotosError.badRequest("from must be at least 1 and at most to (from \(old), to \(new))") }
        guard new <= signed else { throw PhotosError.badRequest("to (\(new)) is past the newest checkpoint's tree size (\(signed))") }
        return try await AuditLogTree.consistencyProof(old: old, new: new, on: connection)
    }
}
