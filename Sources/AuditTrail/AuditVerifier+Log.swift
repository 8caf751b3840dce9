import DatabaseAccess
import Foundation
import PhotosModel

extension AuditVerifier {
    /// What a checkpoint signed of the transparency log.
    struct SignedTree {
        var checkpoint: Int
        var size: Int64
        /// Hex.
        var root: String
        /// The signed note.
        var note: String
        /// The key that signed the checkpoint (the note must carry its signature too).
        var signer: AuditPublicKey
        /// On a rotation, the next key, whose signature the note carries as well.
        var next: AuditPublicKey?
    }

    /// Nodes compared per statement.
    static let logPage: Int64 = 8_192

    // MARK: The transparency log

    /// Checks the log: its leaves are gapless and each is its row's hash; every row up to the
    /// head's `integratedUntilID` is a leaf; every stored internal node is the hash of its two
    /// children; and every checkpoint's tree is the stored tree's root at its size, with a note
    /// that says so, signed under its origin by the checkpoint's key (and the next one on a
    /// rotation). Returns the leaves checked.
    func checkLog(_ trees: [SignedTree]) async throws -> Int {
        func fail(_ reason: String) -> Failure { Failure(problem: AuditChains.Problem(reason: "the transparency log: " + reason)) }
        let head = try await AuditLogTree.head(on: connection)
        if let row = try await connection.queryOne(
            "SELECT id, session_id, seq FROM audit_events e WHERE id <= ? AND NOT EXISTS (SELECT 1 FROM audit_log_leaves l WHERE l.event_id = e.id) ORDER BY id LIMIT 1",
            head.integratedUntilID) {
            throw Failure(problem: AuditChains.Problem(
                rowID: try row.optionalInt64("id"), sessionID: try row.optionalString("session_id"), seq: try row.optionalInt("seq"),
                reason: "is not a leaf of the transparency log, whose head says every row up to id \(head.integratedUntilID) is (a leaf was removed, or the row inserted)"))
        }
        // Leaves in row id order are numbered 0, 1, 2 … without gaps (so each index is used once),
        // and each live row's leaf is its hash. (Archived rows keep their leaves: their hashes
        // were checked when they moved, and their archive's statement signs them.)
        var after: Int64 = -1
        var expected: Int64 = 0
        var checked = 0
        while true {
            let rows = try await connection.query(
                """
                SELECT l.event_id, l.log_index, e.hash AS row_hash, n.hash AS leaf_hash FROM audit_log_leaves l
                LEFT JOIN audit_events e ON e.id = l.event_id
                LEFT JOIN audit_log_nodes n ON n.level = 0 AND n.idx = l.log_index
                WHERE l.event_id > ? ORDER BY l.event_id LIMIT ?
                """, after, Self.logPage)
            for row in rows {
                let index = try row.int64("log_index")
                guard index == expected else {
                    throw fail("leaf \(expected) is missing: the leaves, in row order, go from \(expected - 1) to \(index) (not numbered without gaps: a leaf was removed or renumbered)")
                }
                guard let stored = try? row.blob("leaf_hash") else { throw fail("leaf \(index) has no stored hash (a node was removed)") }
                if let hex = try row.optionalString("row_hash") {
                    guard let rowHash = Hex.decode(hex), MerkleTree.leafHash(rowHash) == stored else {
                        throw fail("leaf \(index) is not the hash of its row (the row's hash or the leaf was altered)")
                    }
                    checked += 1
                }
                after = try row.int64("event_id")
                expected += 1
            }
            if rows.count < Int(Self.logPage) { break }
        }
        guard expected == head.size else {
            throw fail("holds \(expected) leaves where its head says \(head.size) (leaves were added or removed, numbered without gaps or not)")
        }
        // Every internal node from its children, level by level.
        var level = 1
        while head.size >> level > 0 {
            let count = head.size >> level
            let stored = try await connection.queryOne("SELECT count(*) AS nodes FROM audit_log_nodes WHERE level = ?", level)?.int64("nodes") ?? -1
            guard stored == count else { throw fail("level \(level) holds \(stored) nodes where a tree of \(head.size) leaves has \(count)") }
            var start: Int64 = 0
            while start < count {
                let end = min(start + Self.logPage, count)
                let children = try await connection.query(
                    "SELECT idx, hash FROM audit_log_nodes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx", level - 1, start * 2, end * 2)
                let parents = try await connection.query(
                    "SELECT idx, hash FROM audit_log_nodes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx", level, start, end)
                guard children.count == Int(end - start) * 2, parents.count == Int(end - start) else {
                    throw fail("nodes are missing at level \(level - 1) or \(level) between \(start) and \(end)")
                }
                for (offset, parent) in parents.enumerated() {
                    let left = try children[offset * 2].blob("hash"), right = try children[offset * 2 + 1].blob("hash")
                    guard try parent.blob("hash") == MerkleTree.nodeHash(left, right) else {
                        throw fail("node (\(level), \(try parent.int64("idx"))) is not the hash of its children (altered)")
                    }
                }
                start = end
            }
            level += 1
        }
        for tree in trees {
            func failing(_ reason: String) -> Failure { Failure(problem: AuditChains.Problem(checkpoint: tree.checkpoint, reason: reason)) }
            guard tree.size <= head.size else { throw failing("signed a log of \(tree.size) leaves; the log holds \(head.size) (leaves were removed)") }
            let root = try await AuditLogTree.root(size: tree.size, on: connection)
            guard Hex.encode(root) == tree.root else {
                throw failing("signed the log's root \(tree.root.prefix(16))… at size \(tree.size); the stored tree's is \(Hex.encode(root).prefix(16))… (the log was rewritten)")
            }
            guard let note = try? SignedNote(parsing: tree.note), let body = try? LogCheckpoint(parsing: note.text),
                  body.size == tree.size, body.root == root else {
                throw failing("its note is not the log's checkpoint at size \(tree.size) (altered)")
            }
            for key in [tree.signer] + (tree.next.map { [$0] } ?? []) {
                guard note.isSigned(by: SignedNote.VerifierKey(name: body.origin, publicKey: key.rawBytes)) else {
                    throw failing("its note is not signed by public key \(key.hex.prefix(16))… under the name \(body.origin) (altered, or signed by another key)")
                }
            }
        }
        return checked
    }
}
