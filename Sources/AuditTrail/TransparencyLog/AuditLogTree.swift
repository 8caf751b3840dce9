import DatabaseAccess
import Foundation
import PhotosModel

/// The audit trail's Merkle tree as the database keeps it (migration 0020): which row each leaf
/// is (`audit_log_leaves`), the hash of every complete subtree (`audit_log_nodes`), and the head
/// (`audit_log`: size, the newest row id that is a leaf, the origin).
///
/// Rows become leaves by `integrate`, in id order, up to a settled id (`AuditChains.settledNewestID`:
/// every row up to it has committed, so none can appear below it later). Each leaf's hash is
/// stored, and each internal node once, when its subtree completes: appending n leaves writes
/// about 2n nodes and reads only the tree's right edge (one node per set bit of the size).
///
/// Why a node table and not C2SP `tlog-tiles`: a proof reads its log₂ n nodes by primary key in
/// one statement, the same SQL on both stores, and no partial tile is rewritten; tiles would
/// take a third of the space (docs/benchmarks.md, "Transparency log").
public enum AuditLogTree {
    /// The tree's head.
    public struct Head: Sendable, Equatable {
        /// The database's own origin (`audit.logOrigin` may name another).
        public var origin: String
        /// The number of leaves.
        public var size: Int64
        /// Every audit row with an id up to this one is a leaf.
        public var integratedUntilID: Int64
    }

    /// Rows turned into leaves per transaction by default: about 10 ms of the writer each.
    public static let batchRows = 4_096

    /// The head, read in the caller's snapshot.
    public static func head(on connection: any DatabaseConnection) async throws -> Head {
        guard let row = try await connection.queryOne("SELECT origin, size, integrated_until_id FROM audit_log") else {
            throw PhotosError(.internal, "the audit_log table has no row (migration 0020 writes it)")
        }
        return Head(origin: try row.string("origin"), size: try row.int64("size"), integratedUntilID: try row.int64("integrated_until_id"))
    }

    /// Makes leaves of the rows after the head's `integratedUntilID` up to `settledUntil`, at most
    /// `limit` of them, in id order, inside the caller's write transaction (which must be the only
    /// one integrating: `AuditCheckpoints.write`'s lock, or SQLite's one writer). Returns the new
    /// head and whether rows up to `settledUntil` remain.
    public static func integrate(until settledUntil: Int64, limit: Int = batchRows, on connection: any DatabaseConnection) async throws -> (head: Head, more: Bool) {
        try await connection.hold([.exclusive(.number(integrateLockKey))])
        let prepared = try await prepare(until: settledUntil, limit: limit, on: connection)
        guard let head = try await apply(prepared, on: connection) else {
            throw PhotosError(.internal, "the audit log's head moved inside the transaction that holds its lock")
        }
        return (head, prepared.more)
    }

    /// The leaves and nodes one step of integration adds, computed on a read snapshot (the rows,
    /// the tree's right edge, every hash) so that the write holds the writer for the inserts only.
    public struct Integration: Sendable {
        /// The head the step was computed from: `apply` writes it only on that head.
        var from: Head
        /// The head after it.
        var to: Head
        var leaves: [(index: Int64, eventID: Int64)] = []
        var nodes: [(level: Int, index: Int64, hash: MerkleTree.Hash)] = []
        /// Whether settled rows remain after this step.
        public var more: Bool
        /// Whether the step adds nothing and moves nothing.
        public var isEmpty: Bool { from == to }
    }

    /// Computes the next step of integration up to `settledUntil` (at most `limit` rows), reading
    /// only: the rows after the head, in id order, and the tree's right edge.
    public static func prepare(until settledUntil: Int64, limit: Int = batchRows, on connection: any DatabaseConnection) async throws -> Integration {
        let head = try await head(on: connection)
        guard settledUntil > head.integratedUntilID else { return Integration(from: head, to: head, more: false) }
        let rows = try await connection.query(
            "SELECT id, hash FROM audit_events WHERE id > ? AND id <= ? ORDER BY id LIMIT ?", head.integratedUntilID, settledUntil, min(limit, Int.max - 1) + 1)
        let more = rows.count > limit
        let taken = rows.prefix(limit)
        var step = Integration(from: head, to: head, more: more)
        guard let last = taken.last else {
            // Only ids that never committed (PostgreSQL's sequence gaps) or rows archived before
            // they were integrated: nothing to add, the head moves on.
            step.to.integratedUntilID = settledUntil
            return step
        }
        var frontier = try await nodes(MerkleTree.rightEdge(of: head.size), on: connection)
        step.leaves.reserveCapacity(taken.count)
        step.nodes.reserveCapacity(taken.count * 2)
        var size = head.size
        for row in taken {
            let eventID = try row.int64("id")
            guard let rowHash = Hex.decode(try row.string("hash")), rowHash.count == 32 else {
                throw PhotosError(.internal, "audit row \(eventID) has no 32-byte hex hash")
            }
            step.leaves.append((size, eventID))
            let appended = try MerkleTree.append(leaf: MerkleTree.leafHash(rowHash), at: size, frontier: frontier)
            for (node, hash) in appended.nodes { step.nodes.append((node.level, node.index, hash)) }
            frontier = appended.frontier
            size += 1
        }
        step.to.size = size
        step.to.integratedUntilID = more ? try last.int64("id") : settledUntil
        return step
    }

    /// Writes `step` in the caller's write transaction if the head is still the one it was
    /// computed from; returns the new head, or nil (nothing written) when another integration
    /// came first and the step must be computed again.
    public static func apply(_ step: Integration, on connection: any DatabaseConnection) async throws -> Head? {
        try await connection.hold([.exclusive(.number(integrateLockKey))])
        guard try await head(on: connection) == step.from else { return nil }
        guard !step.isEmpty else { return step.to }
        for start in stride(from: 0, to: step.leaves.count, by: Self.leavesPerInsert) {
            let part = step.leaves[start..<min(start + Self.leavesPerInsert, step.leaves.count)]
            try await connection.execute(
                "INSERT INTO audit_log_leaves (event_id, log_index) VALUES " + Array(repeating: "(?, ?)", count: part.count).joined(separator: ", "),
                arguments: part.flatMap { [$0.eventID, $0.index] as [any DatabaseBindable] })
        }
        for start in stride(from: 0, to: step.nodes.count, by: Self.nodesPerInsert) {
            let part = step.nodes[start..<min(start + Self.nodesPerInsert, step.nodes.count)]
            try await connection.execute(
                "INSERT INTO audit_log_nodes (level, idx, hash) VALUES " + Array(repeating: "(?, ?, ?)", count: part.count).joined(separator: ", "),
                arguments: part.flatMap { [$0.level, $0.index, DatabaseValue.blob($0.hash)] as [any DatabaseBindable] })
        }
        try await connection.execute("UPDATE audit_log SET size = ?, integrated_until_id = ?", step.to.size, step.to.integratedUntilID)
        return step.to
    }

    /// The PostgreSQL advisory lock `integrate` holds, so that two instances never number the
    /// same rows ("tree" in ASCII).
    static let integrateLockKey: Int64 = TransactionLock.Key.Fixed.logIntegrate.rawValue

    /// Rows per multi-row statement: each bound value is a parameter, and SQLite allows 32,766
    /// in one statement, PostgreSQL 65,535; these stay far below both with few round trips.
    static let leavesPerInsert = 400
    static let nodesPerInsert = 300
    static let nodesPerSelect = 200
    static let eventsPerSelect = 500

    /// The stored hashes of `subtrees`, read in one statement per `nodesPerSelect`; a missing one
    /// is an error.
    static func nodes(_ subtrees: [MerkleTree.Subtree], on connection: any DatabaseConnection) async throws -> [MerkleTree.Subtree: MerkleTree.Hash] {
        let unique = Array(Set(subtrees))
        var found: [MerkleTree.Subtree: MerkleTree.Hash] = [:]
        for start in stride(from: 0, to: unique.count, by: nodesPerSelect) {
            let part = unique[start..<min(start + nodesPerSelect, unique.count)]
            let rows = try await connection.query(
                "SELECT level, idx, hash FROM audit_log_nodes WHERE " + Array(repeating: "(level = ? AND idx = ?)", count: part.count).joined(separator: " OR "),
                arguments: part.flatMap { [$0.level, $0.index] as [any DatabaseBindable] })
            for row in rows {
                found[MerkleTree.Subtree(level: try row.int("level"), index: try row.int64("idx"))] = try row.blob("hash")
            }
        }
        if let missing = unique.first(where: { found[$0] == nil }) {
            throw PhotosError(.internal, MerkleTree.MissingSubtree(subtree: missing).description)
        }
        return found
    }

    /// Runs `compute` over the stored hashes of `subtrees` (what it reads, computed from the
    /// sizes alone by `MerkleTree.subtreesFor…`), read in one statement.
    static func withNodes<T>(
        _ subtrees: [MerkleTree.Subtree], on connection: any DatabaseConnection, _ compute: ((Int, Int64) throws -> MerkleTree.Hash) throws -> T
    ) async throws -> T {
        let found = try await nodes(subtrees, on: connection)
        return try compute { level, index in
            guard let hash = found[MerkleTree.Subtree(level: level, index: index)] else {
                throw PhotosError(.internal, MerkleTree.MissingSubtree(subtree: MerkleTree.Subtree(level: level, index: index)).description)
            }
            return hash
        }
    }

    /// The root of the tree of the first `size` leaves (size ≤ the head's).
    public static func root(size: Int64, on connection: any DatabaseConnection) async throws -> MerkleTree.Hash {
        try await withNodes(MerkleTree.subtreesForRoot(size: size), on: connection) { try MerkleTree.root(size: size, subtree: $0) }
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves.
    public static func inclusionProof(index: Int64, size: Int64, on connection: any DatabaseConnection) async throws -> [MerkleTree.Hash] {
        try await withNodes(MerkleTree.subtreesForInclusionProof(index: index, size: size), on: connection) {
            try MerkleTree.inclusionProof(index: index, size: size, subtree: $0)
        }
    }

    /// The consistency proof from the tree of `old` leaves to the tree of `new` (0 < old ≤ new ≤ the head's size).
    public static func consistencyProof(old: Int64, new: Int64, on connection: any DatabaseConnection) async throws -> [MerkleTree.Hash] {
        try await withNodes(MerkleTree.subtreesForConsistencyProof(old: old, new: new), on: connection) {
            try MerkleTree.consistencyProof(old: old, new: new, subtree: $0)
        }
    }

    /// The leaf index of each of `eventIDs` that is a leaf.
    public static func logIndexes(of eventIDs: [Int64], on connection: any DatabaseConnection) async throws -> [Int64: Int64] {
        var found: [Int64: Int64] = [:]
        for start in stride(from: 0, to: eventIDs.count, by: eventsPerSelect) {
            let part = Array(eventIDs[start..<min(start + eventsPerSelect, eventIDs.count)])
            for row in try await connection.query(
                "SELECT event_id, log_index FROM audit_log_leaves WHERE event_id IN (\(SQLPlaceholders.list(part.count)))", arguments: SQLPlaceholders.arguments(part)) {
                found[try row.int64("event_id")] = try row.int64("log_index")
            }
        }
        return found
    }
}
