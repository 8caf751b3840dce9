import Foundation
import PhotosModel

/// A session's receipt (`GET /v1/sessions/{id}/receipt`, `photos-admin audit prove`): a run of
/// the session's audit rows, each with its hash, an inclusion proof of the run's newest row in
/// the transparency log, and the signed checkpoint the proof is for. Whoever holds it and the
/// log's note key (`photos-admin audit key --note`) checks it offline (`check`): the rows give
/// their hashes, the hashes chain from the first row (or `previousHash`) to the newest, the
/// newest is a leaf of the checkpoint's tree, and the checkpoint is signed. Nothing is in it that
/// those checks do not prove; docs/receipts.md is the byte-exact procedure.
public struct AuditReceipt: Codable, Sendable, Equatable {
    /// One row: its place (`seq`), its hash and, unless an erasure redacted it, the fields the
    /// hash covers — no other.
    public struct Row: Codable, Sendable, Equatable {
        /// The fields a row's hash covers besides its trail's previous hash and its seq, as
        /// stored: no display name joined in from elsewhere.
        public struct Content: Sendable, Equatable {
            public var sessionId: String
            public var at: String
            public var actor: String
            /// The user id the hash covers (null: no user).
            public var userId: Int64?
            /// The name the row itself holds, which its hash covers: only rows written before
            /// migration 0011 hold one (a later row names its user by `userId` alone).
            public var username: String?
            public var coordinator: String?
            public var step: String
            public var screen: String?
            /// The row's detail, the JSON text as stored (its hash covers these bytes).
            public var detail: String

            /// The content of a row.
            public init(
                sessionId: String, at: String, actor: String, userId: Int64?, username: String?, coordinator: String?, step: String,
                screen: String?, detail: String
            ) {
                self.sessionId = sessionId
                self.at = at
                self.actor = actor
                self.userId = userId
                self.username = username
                self.coordinator = coordinator
                self.step = step
                self.screen = screen
                self.detail = detail
            }
        }

        public var seq: Int
        /// The row's SHA-256, hex (`audit_events.hash`).
        public var hash: String
        /// What the hash covers; nil when an erasure redacted the row (a row from before 0011
        /// whose clear name was removed): its hash can no longer be recomputed, so none of its
        /// fields is shown — the receipt proves its place and hash only.
        public var content: Content?

        /// True for a row whose content was redacted.
        public var redacted: Bool { content == nil }

        /// A row.
        public init(seq: Int, hash: String, content: Content?) {
            self.seq = seq
            self.hash = hash
            self.content = content
        }

        private enum CodingKeys: String, CodingKey {
            case sessionId, seq, at, actor, userId, username, coordinator, step, screen, detail, hash, redacted
        }

        /// The keys of a row with content (every one present, null where the row has none) and
        /// of a redacted one.
        static let contentKeys: Set<String> = ["sessionId", "seq", "at", "actor", "userId", "username", "coordinator", "step", "screen", "detail", "hash"]
        static let redactedKeys: Set<String> = ["seq", "hash", "redacted"]

        /// A row with content: every field, `null` where the row has none; a redacted row:
        /// `seq`, `hash` and `"redacted": true`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(seq, forKey: .seq)
            try container.encode(hash, forKey: .hash)
            guard let content else {
                try container.encode(true, forKey: .redacted)
                return
            }
            try container.encode(content.sessionId, forKey: .sessionId)
            try container.encode(content.at, forKey: .at)
            try container.encode(content.actor, forKey: .actor)
            try container.encode(content.userId, forKey: .userId)
            try container.encode(content.username, forKey: .username)
            try container.encode(content.coordinator, forKey: .coordinator)
            try container.encode(content.step, forKey: .step)
            try container.encode(content.screen, forKey: .screen)
            try container.encode(content.detail, forKey: .detail)
        }

        /// Reads either form; a row that mixes them (`redacted` beside content fields) is refused.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            seq = try container.decode(Int.self, forKey: .seq)
            hash = try container.decode(String.self, forKey: .hash)
            if container.contains(.redacted) {
                guard try container.decode(Bool.self, forKey: .redacted) else {
                    throw DecodingError.dataCorruptedError(forKey: .redacted, in: container, debugDescription: "redacted is true or absent")
                }
                let shown = container.allKeys.filter { ![.seq, .hash, .redacted].contains($0) }
                guard shown.isEmpty else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .redacted, in: container,
                        debugDescription: "a redacted row shows only seq and hash: its hash proves none of \(shown.map(\.stringValue).sorted().joined(separator: ", "))")
                }
                content = nil
                return
            }
            // Every field the hash covers, present (null allowed where the row may have none):
            // a missing key is not read as null.
            for key in [CodingKeys.userId, .username, .coordinator, .screen] where !container.contains(key) {
                throw DecodingError.keyNotFound(key, .init(codingPath: container.codingPath, debugDescription: "every field the hash covers is present (null where the row has none)"))
            }
            content = Content(
                sessionId: try container.decode(String.self, forKey: .sessionId), at: try container.decode(String.self, forKey: .at),
                actor: try container.decode(String.self, forKey: .actor), userId: try container.decode(Int64?.self, forKey: .userId),
                username: try container.decode(String?.self, forKey: .username), coordinator: try container.decode(String?.self, forKey: .coordinator),
                step: try container.decode(String.self, forKey: .step), screen: try container.decode(String?.self, forKey: .screen),
                detail: try container.decode(String.self, forKey: .detail))
        }

        /// The record the hash covers (nil when redacted).
        var record: AuditRecord? {
            content.map {
                AuditRecord(
                    sessionID: $0.sessionId, seq: seq, at: $0.at, actor: $0.actor, userID: $0.userId, username: $0.username,
                    coordinator: $0.coordinator, step: $0.step, screen: $0.screen, detail: $0.detail)
            }
        }
    }

    /// The newest row's inclusion proof.
    public struct Inclusion: Codable, Sendable, Equatable {
        /// The newest row's leaf (the only leaf index the receipt proves).
        public var logIndex: Int64
        public var treeSize: Int64
        /// The proof's hashes, base64, from the leaf up (RFC 6962 order).
        public var hashes: [String]
    }

    public var sessionId: String
    /// The hash of the row before the first, when the receipt does not start at seq 1 (a
    /// receipt holds at most `receipts.maxRows` rows; `?fromSeq=N` picks where it starts).
    public var previousHash: String?
    public var rows: [Row]
    public var inclusion: Inclusion
    /// The C2SP signed note of the checkpoint whose tree the proof is for.
    public var checkpoint: String

    /// A receipt.
    public init(sessionId: String, previousHash: String? = nil, rows: [Row], inclusion: Inclusion, checkpoint: String) {
        self.sessionId = sessionId
        self.previousHash = previousHash
        self.rows = rows
        self.inclusion = inclusion
        self.checkpoint = checkpoint
    }

    /// What a check found.
    public struct Checked: Sendable, Equatable {
        /// Rows whose place was checked (content too, but for the redacted ones).
        public var rows: Int
        /// Of them, rows whose content could not be (redacted by an erasure): place only.
        public var redacted: Int { redactedSeqs.count }
        /// Their seqs, each named to whoever reads the check.
        public var redactedSeqs: [Int]
        /// The first row's seq (1 unless the receipt was cut: then `previousHash` starts the chain).
        public var firstSeq: Int
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

    /// The witnesses of `witnesses` that cosigned the receipt's checkpoint (a valid
    /// `cosignature/v1` line each), with the time each says.
    public func cosigners(_ witnesses: [CosignerKey]) -> [(key: CosignerKey, time: UInt64)] {
        guard let note = try? SignedNote(parsing: checkpoint) else { return [] }
        return witnesses.compactMap { key in key.cosignedTime(of: note).map { (key, $0) } }
    }

    /// `check(keys:)`, then at least `quorum` of `witnesses` must have cosigned the checkpoint —
    /// else step `witnesses`. Whoever holds such a receipt knows that many others saw the same
    /// tree: a log that showed another one to someone else would need them to cosign a fork.
    public func check(keys: [SignedNote.VerifierKey], witnesses: [CosignerKey], quorum: Int) throws -> Checked {
        let checked = try check(keys: keys)
        let cosigned = cosigners(witnesses)
        guard cosigned.count >= quorum else {
            throw Problem(
                step: "witnesses",
                reason: "\(cosigned.count) of the \(witnesses.count) witnesses given cosigned the checkpoint, \(quorum) needed"
                    + (cosigned.isEmpty ? "" : " (\(cosigned.map(\.key.name).joined(separator: ", ")))"))
        }
        return checked
    }

    /// 64 lowercase hex digits.
    static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// `check(key:)` with several trusted keys (the log's keys before and after a rotation): the
    /// checkpoint must be signed by one of them under its origin.
    public func check(keys: [SignedNote.VerifierKey]) throws -> Checked {
        func fail(_ step: String, _ reason: String) -> Problem { Problem(step: step, reason: reason) }
        guard let first = rows.first, let last = rows.last else { throw fail("rows", "the receipt has no rows") }
        var previous: String
        switch (first.seq, previousHash) {
        case (1, nil):
            previous = AuditTrails.genesisHash
        case (1, .some):
            throw fail("chain", "the rows start at seq 1, whose previous hash is the genesis: previousHash must be absent")
        case (let seq, nil) where seq > 1:
            throw fail("chain", "the rows start at seq \(seq) without previousHash (the hash of seq \(seq - 1))")
        case (let seq, .some(let hash)) where seq > 1:
            guard Self.isHash(hash) else { throw fail("chain", "previousHash is not 64 lowercase hex digits") }
            previous = hash
        default:
            throw fail("chain", "the first row's seq is \(first.seq): seqs start at 1")
        }
        var redacted: [Int] = []
        for (offset, row) in rows.enumerated() {
            guard row.seq == first.seq + offset else {
                throw fail("chain", "row \(offset + 1) has seq \(row.seq), not \(first.seq + offset): the rows are not consecutive")
            }
            guard Self.isHash(row.hash) else { throw fail("rows", "row seq \(row.seq)'s hash is not 64 lowercase hex digits") }
            if let record = row.record {
                guard record.sessionID == sessionId else { throw fail("rows", "row seq \(row.seq) belongs to session \(record.sessionID), not \(sessionId)") }
                let computed = record.hash(previous: previous)
                guard computed == row.hash else {
                    throw fail("rows", "row seq \(row.seq)'s fields and the hash before it do not give its hash \(row.hash.prefix(16))… (\(computed.prefix(16))…): the row or one before it was changed")
                }
            } else {
                // Its content no longer gives its hash; the next row's hash covers this one's.
                redacted.append(row.seq)
            }
            previous = row.hash
        }
        // The leaf: the newest row's 32 hash bytes, at an index inside the proven tree.
        guard let leafData = Hex.decode(last.hash), leafData.count == 32 else { throw fail("leaf", "the newest row's hash is not 32 hex bytes") }
        guard inclusion.logIndex >= 0, inclusion.logIndex < inclusion.treeSize else {
            throw fail("leaf", "leaf \(inclusion.logIndex) is not in a tree of \(inclusion.treeSize) leaves")
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
            guard let data = Data(base64Encoded: text), let hash = MerkleTree.Hash(data) else { throw fail("inclusion", "a proof hash is not 32 bytes of base64") }
            proof.append(hash)
        }
        guard MerkleTree.verifyInclusion(leaf: MerkleTree.leafHash(leafData), index: inclusion.logIndex, size: tree.size, proof: proof, root: tree.root) else {
            throw fail("inclusion", "leaf \(inclusion.logIndex) with the newest row's hash is not in the checkpoint's tree by this proof (a row, its hash or the proof was changed)")
        }
        let named = keys.filter { $0.name == tree.origin }
        guard !named.isEmpty else {
            throw fail("signature", "the checkpoint is of the log \(tree.origin), the key is for \(keys.map(\.name).joined(separator: ", "))")
        }
        guard named.contains(where: note.isSigned(by:)) else {
            throw fail("signature", "the checkpoint is not signed by the key \(named.map(\.description).joined(separator: " or "))")
        }
        return Checked(rows: rows.count, redactedSeqs: redacted, firstSeq: first.seq, origin: tree.origin, treeSize: tree.size)
    }
}
