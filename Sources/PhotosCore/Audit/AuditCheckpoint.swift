import Foundation
import SQLiteStore

/// A signed statement of the audit trails' heads, like the signed digest files of AWS
/// CloudTrail: its number, its time, the previous checkpoint's hash, and the head (trail, last
/// seq, last hash) of every trail that changed since the previous checkpoint, signed with the
/// Ed25519 key of `AuditSigningKey`.
///
/// Rows a checkpoint covers cannot be altered, removed or recomputed without `audit verify`
/// noticing, even by someone who can write the database (they lack the key). Rows newer than
/// the newest checkpoint are protected by their chain alone.
public struct AuditCheckpoint: Codable, Sendable, Equatable {
    /// One trail's head.
    public struct Head: Codable, Sendable, Equatable {
        /// The trail: a session id, `operator` or `api`.
        public var trail: String
        /// Its last seq when the checkpoint was made.
        public var seq: Int
        /// That row's hash.
        public var hash: String
    }

    /// 1, 2, 3 … without gaps.
    public var number: Int
    /// When it was made (ISO-8601 UTC with milliseconds).
    public var at: String
    /// The previous checkpoint's `hash` (`AuditLog.genesisHash` for the first).
    public var prevHash: String
    /// The heads of the trails that changed since the previous checkpoint, by trail.
    public var heads: [Head]
    /// The public key that signed it, hex (informative: verification uses a trusted key).
    public var publicKey: String
    /// The hex Ed25519 signature of `statement`.
    public var signature: String
    /// Hex SHA-256 of `statement` and `signature`: what the next checkpoint chains to.
    public var hash: String

    /// The exact bytes that are signed: a versioned line format, each trail length-prefixed,
    /// so that no two checkpoints have the same statement.
    public var statement: [UInt8] {
        var text = "photosd audit checkpoint v1\nnumber \(number)\nat \(at)\nprev \(prevHash)\n"
        for head in heads {
            text += "head \(head.trail.utf8.count):\(head.trail) \(head.seq) \(head.hash)\n"
        }
        return Array(text.utf8)
    }

    /// The hash of a checkpoint with this statement and signature.
    static func hash(statement: [UInt8], signature: String) -> String {
        SecureToken.sha256Hex(statement + Array("signature \(signature)\n".utf8))
    }

    /// The checkpoint as JSON, for `--export` (an operator keeps it elsewhere).
    public var exportJSON: Data {
        get throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            return try encoder.encode(self)
        }
    }
}

/// Writing and reading checkpoints.
public enum AuditCheckpoints {
    /// Writes the next checkpoint, signed with `key`, inside the caller's write transaction:
    /// the heads of every trail that changed since the previous one. With `always == false`,
    /// writes nothing (and returns nil) when no trail changed.
    public static func write(signedWith key: AuditSigningKey, at: String, always: Bool = false, on connection: Connection) throws -> AuditCheckpoint? {
        let heads = try connection.query(
            "SELECT session_id, last_seq, last_hash FROM audit_heads WHERE last_seq > checkpointed_seq ORDER BY session_id"
        ).map { AuditCheckpoint.Head(trail: $0.string(0), seq: $0.int(1), hash: $0.string(2)) }
        guard always || !heads.isEmpty else { return nil }
        let previous = try newest(on: connection)
        var checkpoint = AuditCheckpoint(
            number: (previous?.number ?? 0) + 1, at: at, prevHash: previous?.hash ?? AuditLog.genesisHash,
            heads: heads, publicKey: key.publicKeyHex, signature: "", hash: "")
        let statement = checkpoint.statement
        checkpoint.signature = try key.signatureHex(statement)
        checkpoint.hash = AuditCheckpoint.hash(statement: statement, signature: checkpoint.signature)
        try connection.execute(
            "INSERT INTO audit_checkpoints (number, at, prev_hash, heads, public_key, signature, hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
            checkpoint.number, checkpoint.at, checkpoint.prevHash, String(decoding: try JSONEncoder().encode(heads), as: UTF8.self),
            checkpoint.publicKey, checkpoint.signature, checkpoint.hash)
        try connection.execute("UPDATE audit_heads SET checkpointed_seq = last_seq WHERE last_seq > checkpointed_seq")
        return checkpoint
    }

    /// The newest checkpoint, if any.
    public static func newest(on connection: Connection) throws -> AuditCheckpoint? {
        try connection.queryOne("SELECT number, at, prev_hash, heads, public_key, signature, hash FROM audit_checkpoints ORDER BY number DESC LIMIT 1")
            .map(checkpoint)
    }

    /// Every checkpoint in number order, one at a time.
    static func forEach(on connection: Connection, _ body: (AuditCheckpoint?, Int64) throws -> Void) throws {
        try connection.forEachRow("SELECT number, at, prev_hash, heads, public_key, signature, hash, rowid FROM audit_checkpoints ORDER BY number") { row in
            // A row whose heads do not parse is reported by the caller (nil), not thrown.
            try body(try? checkpoint(row), row.int64(7))
        }
    }

    static func checkpoint(_ row: Row) throws -> AuditCheckpoint {
        let heads = try JSONDecoder().decode([AuditCheckpoint.Head].self, from: Data(row.string(3).utf8))
        return AuditCheckpoint(
            number: row.int(0), at: row.string(1), prevHash: row.string(2), heads: heads,
            publicKey: row.string(4), signature: row.string(5), hash: row.string(6))
    }
}
