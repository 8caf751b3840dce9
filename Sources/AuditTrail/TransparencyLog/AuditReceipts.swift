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

    /// The receipt of the live session `sessionID`, read in the caller's snapshot.
    public static func receipt(sessionID: String, on connection: any DatabaseConnection) async throws -> Outcome {
        let rows = try await connection.query(
            """
            SELECT e.session_id, e.seq, e.at, e.actor, e.user_id, e.username AS recorded_username,
                   coalesce(e.username, CASE WHEN u.erased_at IS NULL THEN u.username END) AS username,
                   e.coordinator, e.step, e.screen, e.detail, e.hash, l.log_index,
                   CASE WHEN EXISTS (SELECT 1 FROM audit_redactions r WHERE r.event_id = e.id) THEN 1 ELSE 0 END AS redacted
            FROM audit_events e LEFT JOIN users u ON u.id = e.user_id LEFT JOIN audit_log_leaves l ON l.event_id = e.id
            WHERE e.session_id = ? ORDER BY e.seq
            """, sessionID
        ).map { row in
            AuditReceipt.Row(
                sessionId: try row.string("session_id"), seq: try row.int("seq"), at: try row.string("at"), actor: try row.string("actor"),
                username: try row.optionalString("username"), coordinator: try row.optionalString("coordinator"), step: try row.string("step"),
                screen: try row.optionalString("screen"), detail: try row.string("detail"), hash: try row.string("hash"), logIndex: try row.optionalInt64("log_index"),
                userId: try row.optionalInt64("user_id"), recordedUsername: try row.optionalString("recorded_username"),
                redacted: try row.int("redacted") == 1 ? true : nil)
        }
        // Served only for a trail that ends where its session says (in this snapshot): whoever
        // deletes a trail's newest rows must not get a shorter receipt that checks.
        if let head = try await connection.queryOne("SELECT trail_seq, trail_hash FROM sessions WHERE id = ?", sessionID) {
            let recordedSeq = try head.int("trail_seq")
            let recordedHash = try head.string("trail_hash")
            if recordedSeq > 0, rows.last?.seq != recordedSeq || rows.last?.hash != recordedHash {
                return .notIntact(TrailNotIntact(sessionID: sessionID, newestSeq: rows.last?.seq ?? 0, recordedSeq: recordedSeq))
            }
        }
        return try await outcome(sessionID: sessionID, rows: rows, log: connection)
    }

    /// One session's rows in an archive file, with their row ids (their leaves are found by id).
    public struct ArchivedRows: Sendable {
        var rows: [(id: Int64, row: AuditReceipt.Row)]
    }

    /// `sessionID`'s rows in the archive file `archive`.
    public static func archivedRows(sessionID: String, archive: any DatabaseConnection) async throws -> ArchivedRows {
        ArchivedRows(rows: try await archive.query(
            "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail, hash FROM audit_events WHERE session_id = ? ORDER BY seq",
            sessionID
        ).map { row in
            (id: try row.int64("id"), row: AuditReceipt.Row(
                sessionId: try row.string("session_id"), seq: try row.int("seq"), at: try row.string("at"), actor: try row.string("actor"),
                username: try row.optionalString("username"), coordinator: try row.optionalString("coordinator"), step: try row.string("step"),
                screen: try row.optionalString("screen"), detail: try row.string("detail"), hash: try row.string("hash"), logIndex: nil,
                userId: try row.optionalInt64("user_id"), recordedUsername: try row.optionalString("username"), redacted: nil))
        })
    }

    /// The receipt of `sessionID` from its rows in an archive file, proven against the live
    /// database's log (`log`), which keeps the leaves of archived rows.
    public static func receipt(sessionID: String, archived: ArchivedRows, log: any DatabaseConnection) async throws -> Outcome {
        var rows = archived.rows
        let indexes = try await AuditLogTree.logIndexes(of: rows.map(\.id), on: log)
        for offset in rows.indices { rows[offset].row.logIndex = indexes[rows[offset].id] }
        return try await outcome(sessionID: sessionID, rows: rows.map(\.row), log: log)
    }

    private static func outcome(sessionID: String, rows: [AuditReceipt.Row], log connection: any DatabaseConnection) async throws -> Outcome {
        guard let newest = rows.last else { return .notFound }
        guard let index = newest.logIndex, let tree = try await newestSignedTree(on: connection), index < tree.size else { return .pending }
        let proof = try await AuditLogTree.inclusionProof(index: index, size: tree.size, on: connection)
        return .receipt(AuditReceipt(
            sessionId: sessionID, rows: rows,
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
