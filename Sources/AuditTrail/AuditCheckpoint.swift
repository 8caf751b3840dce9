import DatabaseAccess
import Foundation
import PhotosModel

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
    /// The previous checkpoint's `hash` (`AuditChains.genesisHash` for the first).
    public var prevHash: String
    /// It covers the rows with ids up to this one: every row committed before it was made.
    public var coversUntilID: Int64
    /// The heads of the trails that changed since the previous checkpoint, by trail.
    public var heads: [Head]
    /// The public key that signed it, hex (informative: verification uses a trusted key).
    public var publicKey: String
    /// The hex Ed25519 signature of `statement`.
    public var signature: String
    /// Hex SHA-256 of `statement` and `signature`: what the next checkpoint chains to.
    public var hash: String
    /// On a key rotation (`photos-admin audit key --rotate`): the public key, hex, that signs
    /// every checkpoint after this one. Signed, with the rest, by the key being retired.
    public var nextPublicKey: String?
    /// The transparency log's size when it was made: every row up to `coversUntilID` is a leaf
    /// (nil: written before migration 0020).
    public var treeSize: Int64?
    /// The log's root hash at `treeSize`, hex.
    public var treeRoot: String?
    /// The C2SP signed note of the log's checkpoint (`<origin>\n<size>\n<base64 root>\n`,
    /// a blank line, the signature lines): signed by `publicKey`'s key, and on a rotation by the
    /// next key too.
    public var note: String?

    /// Creates a checkpoint.
    public init(
        number: Int, at: String, prevHash: String, coversUntilID: Int64, heads: [Head], publicKey: String, signature: String, hash: String,
        nextPublicKey: String? = nil, treeSize: Int64? = nil, treeRoot: String? = nil, note: String? = nil
    ) {
        self.number = number
        self.at = at
        self.prevHash = prevHash
        self.coversUntilID = coversUntilID
        self.heads = heads
        self.publicKey = publicKey
        self.signature = signature
        self.hash = hash
        self.nextPublicKey = nextPublicKey
        self.treeSize = treeSize
        self.treeRoot = treeRoot
        self.note = note
    }

    /// The public key (hex) that must sign the checkpoint after this one.
    public var nextSigner: String { nextPublicKey ?? publicKey }

    /// The exact bytes that are signed: a versioned line format, each trail length-prefixed,
    /// so that no two checkpoints have the same statement.
    public var statement: [UInt8] {
        var text = "photosd audit checkpoint v1\nnumber \(number)\nat \(at)\nprev \(prevHash)\ncovers \(coversUntilID)\n"
        // Only on a rotation, so that every other checkpoint's statement is what it always was.
        if let nextPublicKey { text += "next-key \(nextPublicKey)\n" }
        // Only from 0020 on: the log's tree, so the chain of checkpoints signs it too.
        if let treeSize, let treeRoot { text += "tree \(treeSize) \(treeRoot)\n" }
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
///
/// A checkpoint is made in two steps, so that the writer is held only for one small INSERT: the
/// heads are read from a snapshot (`changes`) — every trail with a row after the previous
/// checkpoint's `coversUntilID` — and then written (`write`) if no other checkpoint came in
/// between. Row ids grow in commit order behind SQLite's single writer, so a snapshot's newest
/// id says exactly what it covers. On PostgreSQL they do not: the snapshot is taken after the
/// newest settled id is known (`AuditChains.readSettled`), and `write` takes a lock of its own, so
/// that instances write their checkpoints one at a time (the second finds the first's and reads
/// again).
public enum AuditCheckpoints {
    /// What changed since the newest checkpoint, as of the caller's read snapshot.
    public struct Changes: Sendable {
        /// The newest checkpoint (nil: none yet).
        public var previous: AuditCheckpoint?
        /// The heads of the trails with rows after it, by trail.
        public var heads: [AuditCheckpoint.Head]
        /// The newest row id in the snapshot.
        public var newestID: Int64
    }

    /// Reads what a new checkpoint would cover, up to row `settledUntil` (from
    /// `AuditChains.readSettled`), inside the caller's read transaction; without it, up to
    /// `AuditChains.settledNewestID` (on PostgreSQL then in a write transaction).
    public static func changes(on connection: any DatabaseConnection, settledUntil: Int64? = nil) async throws -> Changes {
        let previous = try await newest(on: connection, withHeads: false)
        let since = previous?.coversUntilID ?? 0
        let newestID = if let settledUntil { settledUntil } else { try await AuditChains.settledNewestID(on: connection) }
        // A trail's newest row has its largest id (a trail's rows are appended in seq order).
        let heads = try await connection.query(
            """
            SELECT e.session_id, e.seq, e.hash FROM audit_events e
            JOIN (SELECT max(id) AS id FROM audit_events WHERE id > \(since) AND id <= \(newestID) GROUP BY session_id) newest ON newest.id = e.id
            ORDER BY e.session_id
            """
        ).map { AuditCheckpoint.Head(trail: try $0.string("session_id"), seq: try $0.int("seq"), hash: try $0.string("hash")) }
        return Changes(previous: previous, heads: heads, newestID: newestID)
    }

    /// Writes the checkpoint of `changes`, signed with `key`, inside the caller's write
    /// transaction. Returns nil (and writes nothing) if another checkpoint was written since
    /// `changes` was read: the caller reads again.
    ///
    /// With `rotatingTo`, the checkpoint names that public key as the signer of every later one.
    /// Signing with a key other than the one the previous checkpoint names is refused
    /// (`conflict`): two processes holding different keys (a rotation done through another
    /// instance's key file) never both sign.
    ///
    /// The rows it covers become the log's leaves first (`AuditLogTree.integrate`, whatever an
    /// earlier call left), and the checkpoint signs the tree: its size and root in the statement,
    /// and a C2SP signed note under `origin` (nil: the one the log's checkpoints are signed
    /// under; another than that is refused), signed by `key` and, on a rotation, by the next key
    /// as well, whose verifier key the note carries as `key <verifier key>`.
    ///
    /// Nothing is signed over a tree that does not extend the newest head the key signed — the
    /// previous checkpoint's and `signed.outside` (the file beside the key): that throws
    /// `LogFork`. Only a new log (`signed.newLog`) is not held to them; its note carries the old
    /// log's last head as `previous <origin> <size> <base64 root>`.
    public static func write(
        _ changes: Changes, signedWith key: AuditSigningKey, at: String, rotatingTo next: AuditSigningKey? = nil, origin: String? = nil,
        guardedBy signed: SigningGuard = SigningGuard(), on connection: any DatabaseConnection
    ) async throws -> AuditCheckpoint? {
        // One checkpoint writer at a time across instances; the next one's statements then see
        // this one's row (READ COMMITTED) and it returns nil below.
        try await connection.hold([.exclusive(.number(writeLockKey))])
        guard try await newest(on: connection, withHeads: false)?.number == changes.previous?.number else { return nil }
        if let previous = changes.previous, previous.nextSigner != key.publicKeyHex {
            throw PhotosError(.conflict, keyMismatch(previous, held: key.publicKeyHex))
        }
        let coversUntilID = max(changes.newestID, changes.previous?.coversUntilID ?? 0)
        // Whatever the steps before left (`AuditService.integrate`), in one go: no limit, no more.
        let head = try await AuditLogTree.integrate(until: coversUntilID, limit: Int.max, on: connection).head
        var extensions: [String] = []
        let logOrigin: String
        if let newLog = signed.newLog {
            // A new log: nothing it signs can contradict the old one's notes (another name), and
            // its first note says where the old one ended.
            let stored = try AuditLogTree.signedOrigin(of: changes.previous)
            guard newLog != stored, newLog != head.origin || stored != nil else {
                throw PhotosError.badRequest("the new log's origin \(newLog) is the current log's: choose another name")
            }
            if let stored, let last = signed.outside ?? changes.previous.flatMap(SignedTreeHead.init(of:)) {
                extensions.append("previous \(stored) \(last.size) \(Data(last.root).base64EncodedString())")
            }
            logOrigin = newLog
        } else {
            logOrigin = try AuditLogTree.origin(configured: origin, newest: changes.previous, head: head)
            // Never a tree that does not extend what the key signed (inside the database or out).
            if let fork = try await AuditLogTree.fork(
                size: head.size, outside: signed.outside, outsidePath: signed.outsidePath, newest: changes.previous, on: connection) {
                throw fork
            }
        }
        if logOrigin != head.origin {
            // The origin is the log's from its first checkpoint on (`AuditLogTree.origin`).
            try await connection.execute("UPDATE audit_log SET origin = \(logOrigin)")
        }
        let root = try await AuditLogTree.root(size: head.size, on: connection)
        if let next { extensions.append("key \(next.noteVerifierKey(origin: logOrigin))") }
        let signers = [key] + (next.map { [$0] } ?? [])
        let note = try SignedNote.sign(
            LogCheckpoint(origin: logOrigin, size: head.size, root: root, extensions: extensions).body,
            with: signers.map { (logOrigin, $0.privateKey) })
        var checkpoint = AuditCheckpoint(
            number: (changes.previous?.number ?? 0) + 1, at: at, prevHash: changes.previous?.hash ?? AuditChains.genesisHash,
            coversUntilID: coversUntilID,
            heads: changes.heads, publicKey: key.publicKeyHex, signature: "", hash: "", nextPublicKey: next?.publicKeyHex,
            treeSize: head.size, treeRoot: Hex.encode(root), note: note.encoded)
        let statement = checkpoint.statement
        checkpoint.signature = try key.signatureHex(statement)
        checkpoint.hash = AuditCheckpoint.hash(statement: statement, signature: checkpoint.signature)
        let heads = String(decoding: try JSONEncoder().encode(checkpoint.heads), as: UTF8.self)
        try await connection.execute(
            """
            INSERT INTO audit_checkpoints (\(raw: columns)) VALUES (
                \(checkpoint.number), \(checkpoint.at), \(checkpoint.prevHash), \(checkpoint.coversUntilID), \(heads),
                \(checkpoint.publicKey), \(checkpoint.signature), \(checkpoint.hash), \(checkpoint.nextPublicKey),
                \(checkpoint.treeSize), \(checkpoint.treeRoot), \(checkpoint.note))
            """)
        return checkpoint
    }

    /// What a signature must not contradict (`AuditService` reads it before each checkpoint).
    public struct SigningGuard: Sendable {
        /// The newest head the key signed, from the file beside it (nil: none yet).
        public var outside: SignedTreeHead?
        /// That file, for messages.
        public var outsidePath: String
        /// The origin of a new log (`audit log restart`): its first checkpoint is not held to the
        /// old log's heads, and carries the last of them as `previous <origin> <size> <root>`.
        public var newLog: String?

        /// A guard.
        public init(outside: SignedTreeHead? = nil, outsidePath: String = "the signed tree head file", newLog: String? = nil) {
            self.outside = outside
            self.outsidePath = outsidePath
            self.newLog = newLog
        }
    }

    /// The columns of a checkpoint's row, in the order `checkpoint(_:)` reads them.
    static let columns = "number, at, prev_hash, covers_until_id, heads, public_key, signature, hash, next_public_key, tree_size, tree_root, note"

    /// Why `held` may not sign the checkpoint after `previous`.
    static func keyMismatch(_ previous: AuditCheckpoint, held: String) -> String {
        previous.nextPublicKey != nil
            ? "the audit signing key was rotated at checkpoint \(previous.number) to public key \(previous.nextSigner); this process holds \(held): "
                + "put the new key at audit.signingKeyPath (photos-admin audit key --rotate, run again, finishes an interrupted rotation)"
            : "the key with public key \(held) did not sign this database's checkpoints (newest: \(previous.number), public key \(previous.nextSigner)): "
                + "set audit.signingKeyPath to that key's file"
    }

    /// The PostgreSQL advisory lock a checkpoint's `write` holds ("ckpt" in ASCII).
    static let writeLockKey: Int64 = TransactionLock.Key.Fixed.checkpointWrite.rawValue

    /// The newest checkpoint, if any. `withHeads: false` leaves its heads out (empty): what the
    /// next checkpoint needs of it is its number, hash, coverage and signer, and decoding the
    /// heads of every trail it signed (200,000 after a busy interval, 2.5 CPU-s) at each
    /// checkpoint would make the idle cost grow with the traffic before it.
    public static func newest(on connection: any DatabaseConnection, withHeads: Bool = true) async throws -> AuditCheckpoint? {
        try await connection.queryOne(
            "SELECT \(raw: withHeads ? columns : columnsWithoutHeads) FROM audit_checkpoints ORDER BY number DESC LIMIT 1"
        ).map(checkpoint)
    }

    /// When the oldest audit row that no checkpoint covers was written (nil: every row is
    /// covered): how long the newest rows have been protected by their chain alone. Two index
    /// seeks, whatever the database holds (`/readyz`, `photosd_audit_checkpoint_age_seconds`).
    public static func oldestUncoveredRowTime(on connection: any DatabaseConnection) async throws -> String? {
        try await connection.queryOne(
            """
            SELECT at FROM audit_events
            WHERE id > coalesce((SELECT covers_until_id FROM audit_checkpoints ORDER BY number DESC LIMIT 1), 0)
            ORDER BY id LIMIT 1
            """
        )?.string("at")
    }

    /// When the oldest row still in `audit_events` was written (nil: none): how far back the
    /// live trail reaches, which `audit archive` moves forward (`photosd_audit_oldest_row_age_seconds`).
    public static func oldestLiveRowTime(on connection: any DatabaseConnection) async throws -> String? {
        try await connection.queryOne("SELECT at FROM audit_events ORDER BY id LIMIT 1")?.string("at")
    }

    /// `columns` with an empty list in place of the heads.
    static let columnsWithoutHeads = columns.replacingOccurrences(of: "heads,", with: "'[]' AS heads,")

    /// A checkpoint from a row of `columns`.
    static func checkpoint(_ row: Row) throws -> AuditCheckpoint {
        let heads = try JSONDecoder().decode([AuditCheckpoint.Head].self, from: Data(row.string("heads").utf8))
        return AuditCheckpoint(
            number: try row.int("number"), at: try row.string("at"), prevHash: try row.string("prev_hash"), coversUntilID: try row.int64("covers_until_id"),
            heads: heads, publicKey: try row.string("public_key"), signature: try row.string("signature"), hash: try row.string("hash"),
            nextPublicKey: try row.optionalString("next_public_key"), treeSize: try row.optionalInt64("tree_size"), treeRoot: try row.optionalString("tree_root"),
            note: try row.optionalString("note"))

    }
}
