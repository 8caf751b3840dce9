import Foundation
import PhotosModel

/// A session's receipt (`GET /v1/sessions/{id}/receipt`, `photos-admin audit prove`): the
/// session's audit rows, each with its hash and leaf index, an inclusion proof of its newest
/// row in the transparency log, and the signed checkpoint the proof is for. Whoever holds it and
/// the log's note key (`photos-admin audit key --note`) checks it offline (`check`): the rows
/// give their hashes, the hashes chain from the first row to the newest, the newest is a leaf
/// of the checkpoint's tree, and the checkpoint is signed.
public struct AuditReceipt: Codable, Sendable, Equatable {
    /// One row: the `audit_trail` view's fields, its hash and its leaf, and the two fields the
    /// hash covers that the view shows otherwise.
    public struct Row: Codable, Sendable, Equatable {
        public var sessionId: String
        public var seq: Int
        public var at: String
        public var actor: String
        /// As the view shows it: the user's name from `users` (null once erased), or the name a
        /// row from before migration 0011 holds.
        public var username: String?
        public var coordinator: String?
        public var step: String
        public var screen: String?
        /// The row's detail, the JSON text as stored (its hash covers these bytes).
        public var detail: String
        /// The row's SHA-256, hex (`audit_events.hash`).
        public var hash: String
        /// Its leaf in the log.
        public var logIndex: Int64?
        /// The user id the hash covers (the view shows the name instead).
        public var userId: Int64?
        /// The name the row itself holds, which its hash covers: only rows from before 0011.
        public var recordedUsername: String?
        /// True when erasure removed a name the hash covered (rows from before 0011): the chain
        /// proves the row's place and hash, no longer its content.
        public var redacted: Bool?

        /// Written with `null` for the view's empty fields (as `audit_trail` shows them);
        /// `recordedUsername` and `redacted` only when they say something.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(sessionId, forKey: .sessionId)
            try container.encode(seq, forKey: .seq)
            try container.encode(at, forKey: .at)
            try container.encode(actor, forKey: .actor)
            try container.encode(username, forKey: .username)
            try container.encode(coordinator, forKey: .coordinator)
            try container.encode(step, forKey: .step)
            try container.encode(screen, forKey: .screen)
            try container.encode(detail, forKey: .detail)
            try container.encode(hash, forKey: .hash)
            try container.encode(logIndex, forKey: .logIndex)
            try container.encode(userId, forKey: .userId)
            try container.encodeIfPresent(recordedUsername, forKey: .recordedUsername)
            try container.encodeIfPresent(redacted, forKey: .redacted)
        }

        /// The record the hash covers.
        var record: AuditRecord {
            AuditRecord(
                sessionID: sessionId, seq: seq, at: at, actor: actor, userID: userId, username: recordedUsername,
                coordinator: coordinator, step: step, screen: screen, detail: detail)
        }
    }

    /// The newest row's inclusion proof.
    public struct Inclusion: Codable, Sendable, Equatable {
        public var logIndex: Int64
        public var treeSize: Int64
        /// The proof's hashes, base64, from the leaf up (RFC 6962 order).
        public var hashes: [String]
    }

    public var sessionId: String
    public var rows: [Row]
    public var inclusion: Inclusion
    /// The C2SP signed note of the checkpoint whose tree the proof is for.
    public var checkpoint: String

    /// A receipt.
    public init(sessionId: String, rows: [Row], inclusion: Inclusion, checkpoint: String) {
        self.sessionId = sessionId
        self.rows = rows
        self.inclusion = inclusion
        self.checkpoint = checkpoint
    }

    /// What a check found.
    public struct Checked: Sendable, Equatable {
        /// Rows whose content and place were checked.
        public var rows: Int
        /// Of them, rows whose content could not be (redacted by an erasure): place only.
        public var redacted: Int { redactedSeqs.count }
        /// Their seqs, each named to whoever reads the check.
        public var redactedSeqs: [Int]
        /// The checkpoint's origin and tree size.
        public var origin: String
        public var treeSize: Int64
    }

    /// Why a receipt does not check out, named by the step that failed.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        /// `format` (read before any check: `decodeStrictly`), `rows`, `chain`, `leaf`, `inclusion`,
        /// `checkpoint` or `signature`.
        public var step: String
        public var reason: String
        public var description: String { "\(step): \(reason)" }
    }

    /// Checks the receipt with nothing but itself and the note key: rows → row hashes → chain →
    /// leaf → inclusion → note signature. Throws the first `Problem`.
    public func check(key: SignedNote.VerifierKey) throws -> Checked {
        try check(keys: [key])
    }

    /// `check(key:)` with several trusted keys (the log's keys before and after a rotation): the
    /// checkpoint must be signed by one of them under its origin.
    public func check(keys: [SignedNote.VerifierKey]) throws -> Checked {
        func fail(_ step: String, _ reason: String) -> Problem { Problem(step: step, reason: reason) }
        guard let last = rows.last else { throw fail("rows", "the receipt has no rows") }
        var previous = AuditLog.genesisHash
        var redacted: [Int] = []
        for (offset, row) in rows.enumerated() {
            guard row.sessionId == sessionId else { throw fail("rows", "row \(offset + 1) belongs to session \(row.sessionId), not \(sessionId)") }
            guard row.seq == offset + 1 else { throw fail("chain", "row \(offset + 1) has seq \(row.seq): the rows are not the session's from seq 1 without gaps") }
            if row.redacted == true {
                // Its content no longer gives its hash; the next row's hash covers this one's.
                redacted.append(row.seq)
            } else {
                let computed = row.record.hash(previous: previous)
                guard computed == row.hash else {
                    throw fail("rows", "row seq \(row.seq)'s fields do not give its hash \(row.hash.prefix(16))… (\(computed.prefix(16))…): the row was changed")
                }
            }
            previous = row.hash
        }
        guard let leafData = Hex.decode(last.hash), leafData.count == 32 else { throw fail("leaf", "the newest row's hash is not 32 hex bytes") }
        guard last.logIndex == inclusion.logIndex else {
            throw fail("leaf", "the proof is for leaf \(inclusion.logIndex), the newest row is leaf \(last.logIndex.map(String.init) ?? "none")")
        }
        let note: SignedNote
        let tree: LogCheckpoint
        do {
            note = try SignedNote(parsing: checkpoint)
            tree = try LogCheckpoint(parsing: note.text)
        } catch {
            throw fail("checkpoint", "not a signed checkpoint note: \(error)")
        }
        guard tree.size == inclusion.treeSize else { throw fail("checkpoint", "the proof is for a tree of \(inclusion.treeSize) leaves, the checkpoint's has \(tree.size)") }
        var proof: [MerkleTree.Hash] = []
        for text in inclusion.hashes {
            guard let data = Data(base64Encoded: text), data.count == 32 else { throw fail("inclusion", "a proof hash is not 32 bytes of base64") }
            proof.append(Array(data))
        }
        guard inclusion.logIndex >= 0, inclusion.logIndex < tree.size,
              MerkleTree.verifyInclusion(leaf: MerkleTree.leafHash(leafData), index: inclusion.logIndex, size: tree.size, proof: proof, root: tree.root)
        else {
            throw fail("inclusion", "leaf \(inclusion.logIndex) with the newest row's hash is not in the checkpoint's tree by this proof (a row, its hash or the proof was changed)")
        }
        let named = keys.filter { $0.name == tree.origin }
        guard !named.isEmpty else {
            throw fail("signature", "the checkpoint is of the log \(tree.origin), the key is for \(keys.map(\.name).joined(separator: ", "))")
        }
        guard named.contains(where: note.isSigned(by:)) else {
            throw fail("signature", "the checkpoint is not signed by the key \(named.map(\.description).joined(separator: " or "))")
        }
        return Checked(rows: rows.count, redactedSeqs: redacted, origin: tree.origin, treeSize: tree.size)
    }
}
