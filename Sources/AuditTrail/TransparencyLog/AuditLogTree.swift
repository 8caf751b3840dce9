import Crypto
import DatabaseAccess
import Foundation
import PhotosModel

/// The audit trail's Merkle tree as the database keeps it (migrations 0020, 0023): the leaves'
/// hashes 256 to a row (`audit_log_tiles`, C2SP tlog-tiles' level-0 tiles, the newest one partial
/// and rewritten as it fills), the hash of every complete subtree of level `lowestStoredLevel`
/// (6: 64 leaves) and above (`audit_log_nodes`), which row each leaf is (`audit_log_leaf_runs`,
/// one row per run of consecutive row ids), and the head (`audit_log`: size, the newest row id
/// that is a leaf, the origin).
///
/// Rows become leaves by `integrate`, in id order, up to a settled id (`AuditChains.settledNewestID`:
/// every row up to it has committed, so none can appear below it later). Appending n leaves
/// writes n/256 tiles (and rewrites the partial one), n/32 nodes and a run or two, and reads only
/// the tree's right edge: no row of its own per leaf (0020's layout wrote three). A node below
/// level 6 is the hash of at most 32 leaves of one tile, computed when a proof needs it (31
/// hashes at most, 57 for a whole inclusion proof).
///
/// Why level-0 tiles and nodes above, not C2SP tiles at every level: a proof reads its nodes by
/// primary key in one statement and a tile or two, the same SQL on both stores, with little to
/// hash; the nodes are one row per 32 leaves (docs/benchmarks.md, "Transparency log").
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

    /// The levels a tile spans (C2SP's tile height).
    public static let tileHeight = 8
    /// The hashes a full tile holds.
    public static let tileWidth: Int64 = 1 << tileHeight
    /// Nodes of this level and above are stored (`audit_log_nodes`); those below are computed
    /// from the tile that holds their leaves.
    public static let lowestStoredLevel = 6

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

    /// The tiles, nodes and runs one step of integration adds, computed on a read snapshot (the
    /// rows, the tree's right edge, every hash) so that the write holds the writer for the
    /// inserts only.
    public struct Integration: Sendable {
        /// The head the step was computed from: `apply` writes it only on that head.
        var from: Head
        /// The head after it.
        var to: Head
        /// Runs of consecutive row ids that become consecutive leaves.
        var runs: [LeafRun] = []
        /// Tiles written whole: the partial tile the step extends (`extendsPartial`) first.
        var tiles: [(index: Int64, hashes: [UInt8])] = []
        /// Whether `tiles.first` rewrites the tree's partial tile rather than adding one.
        var extendsPartial = false
        /// The stored nodes (level ≥ `lowestStoredLevel`) the new leaves complete.
        var nodes: [(level: Int, index: Int64, hash: MerkleTree.Hash)] = []
        /// Whether settled rows remain after this step.
        public var more: Bool
        /// Whether the step adds nothing and moves nothing.
        public var isEmpty: Bool { from == to }
    }

    /// Rows `firstEventID ..< firstEventID + count` are leaves `firstIndex ..< firstIndex + count`.
    public struct LeafRun: Sendable, Equatable {
        public var firstEventID: Int64
        public var firstIndex: Int64
        public var count: Int64

        /// The leaf index of row `eventID`, if this run holds it.
        public func index(of eventID: Int64) -> Int64? {
            eventID >= firstEventID && eventID < firstEventID + count ? firstIndex + (eventID - firstEventID) : nil
        }
    }

    /// Computes the next step of integration up to `settledUntil` (at most `limit` rows), reading
    /// only: the rows after the head, in id order, the tree's right edge and its partial tile.
    public static func prepare(until settledUntil: Int64, limit: Int = batchRows, on connection: any DatabaseConnection) async throws -> Integration {
        let head = try await head(on: connection)
        guard settledUntil > head.integratedUntilID else { return Integration(from: head, to: head, more: false) }
        let rows = try await connection.query(
            "SELECT id, hash FROM audit_events WHERE id > \(head.integratedUntilID) AND id <= \(settledUntil) ORDER BY id LIMIT \(min(limit, Int.max - 1) + 1)")
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
        var tile: [UInt8] = []
        if head.size % tileWidth != 0 {
            tile = try await tiles([head.size / tileWidth], on: connection)[head.size / tileWidth] ?? []
            guard tile.count == Int(head.size % tileWidth) * 32 else {
                throw PhotosError(.internal, "the audit log's partial tile \(head.size / tileWidth) holds \(tile.count / 32) hashes where its size says \(head.size % tileWidth)")
            }
            step.extendsPartial = true
        }
        tile.reserveCapacity(Int(tileWidth) * 32)
        step.nodes.reserveCapacity(taken.count / Int(tileWidth) + 8)
        var size = head.size
        for row in taken {
            let eventID = try row.int64("id")
            guard let rowHash = Hex.decode(try row.string("hash")), rowHash.count == 32 else {
                throw PhotosError(.internal, "audit row \(eventID) has no 32-byte hex hash")
            }
            if let run = step.runs.last, run.firstEventID + run.count == eventID {
                step.runs[step.runs.count - 1].count += 1
            } else {
                step.runs.append(LeafRun(firstEventID: eventID, firstIndex: size, count: 1))
            }
            let leaf = MerkleTree.leafHash(rowHash)
            let appended = try MerkleTree.append(leaf: leaf, at: size, frontier: frontier)
            for (node, hash) in appended.nodes where node.level >= lowestStoredLevel { step.nodes.append((node.level, node.index, hash)) }
            frontier = appended.frontier
            tile += leaf
            size += 1
            if size % tileWidth == 0 {
                step.tiles.append(((size - 1) / tileWidth, tile))
                tile.removeAll(keepingCapacity: true)
            }
        }
        if !tile.isEmpty { step.tiles.append((size / tileWidth, tile)) }
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
        var tiles = step.tiles[...]
        if step.extendsPartial, let partial = tiles.popFirst() {
            // The trigger lets a tile only be extended.
            try await connection.execute("UPDATE audit_log_tiles SET hashes = \(DatabaseValue.blob(partial.hashes)) WHERE idx = \(partial.index)")
        }
        try await connection.insert(
            into: "audit_log_tiles", columns: "idx, hashes", rows: tiles.map { [$0.index, DatabaseValue.blob($0.hashes)] },
            perStatement: Self.tilesPerInsert)
        try await connection.insert(
            into: "audit_log_leaf_runs", columns: "first_event_id, first_index, count", rows: step.runs.map { [$0.firstEventID, $0.firstIndex, $0.count] },
            perStatement: Self.runsPerInsert)
        try await connection.insert(
            into: "audit_log_nodes", columns: "level, idx, hash", rows: step.nodes.map { [$0.level, $0.index, DatabaseValue.blob($0.hash.bytes)] },
            perStatement: Self.nodesPerInsert)
        try await connection.execute("UPDATE audit_log SET size = \(step.to.size), integrated_until_id = \(step.to.integratedUntilID)")
        return step.to
    }

    /// The PostgreSQL advisory lock `integrate` holds, so that two instances never number the
    /// same rows ("tree" in ASCII).
    static let integrateLockKey: Int64 = TransactionLock.Key.Fixed.logIntegrate.rawValue

    /// Rows per multi-row statement: each bound value is a parameter, and SQLite allows 32,766
    /// in one statement, PostgreSQL 65,535; these stay far below both with few round trips.
    static let runsPerInsert = 300
    static let nodesPerInsert = 300
    static let nodesPerSelect = 200
    /// Tiles are up to 8 KiB each: a statement carries up to 800 KiB.
    static let tilesPerInsert = 100
    static let tilesPerSelect = 100

    /// The hashes of `subtrees`: those of level `lowestStoredLevel` and above read from `audit_log_nodes`
    /// (one statement per `nodesPerSelect`), those below computed from the tiles that hold their
    /// leaves; a missing one is an error.
    static func nodes(_ subtrees: [MerkleTree.Subtree], on connection: any DatabaseConnection) async throws -> [MerkleTree.Subtree: MerkleTree.Hash] {
        let unique = Array(Set(subtrees))
        let stored = unique.filter { $0.level >= lowestStoredLevel }, inTiles = unique.filter { $0.level < lowestStoredLevel }
        var found: [MerkleTree.Subtree: MerkleTree.Hash] = [:]
        for start in stride(from: 0, to: stored.count, by: nodesPerSelect) {
            let part = stored[start..<min(start + nodesPerSelect, stored.count)]
            let wanted = SQL.joined(part.map { "(level = \($0.level) AND idx = \($0.index))" }, separator: " OR ")
            let rows = try await connection.query("SELECT level, idx, hash FROM audit_log_nodes WHERE \(wanted)")
            for row in rows {
                let subtree = MerkleTree.Subtree(level: try row.int("level"), index: try row.int64("idx"))
                guard let hash = MerkleTree.Hash(try row.blob("hash")) else {
                    throw PhotosError(.internal, "the audit log's node (\(subtree.level), \(subtree.index)) is not 32 bytes")
                }
                found[subtree] = hash
            }
        }
        if !inTiles.isEmpty {
            let tiles = try await tiles(Array(Set(inTiles.map { ($0.index << Int64($0.level)) / tileWidth })), on: connection)
            for subtree in inTiles {
                let first = subtree.index << Int64(subtree.level)
                if let tile = tiles[first / tileWidth], let hash = hashInTile(tile, from: first % tileWidth, level: subtree.level) { found[subtree] = hash }
            }
        }
        if let missing = unique.first(where: { found[$0] == nil }) {
            throw PhotosError(.internal, MerkleTree.MissingSubtree(subtree: missing).description)
        }
        return found
    }

    /// The hash of the 2^level leaves of `tile` from `offset` (a level below the tile's height),
    /// or nil when the tile does not hold them all. Pairs are hashed in place, in one buffer.
    static func hashInTile(_ tile: [UInt8], from offset: Int64, level: Int) -> MerkleTree.Hash? {
        var count = 1 << level
        let start = Int(offset) * 32
        guard level <= tileHeight, start >= 0, start + count * 32 <= tile.count else { return nil }
        if count == 1 { return MerkleTree.Hash(tile[start..<(start + 32)]) }
        var hashes = Array(tile[start..<(start + count * 32)])
        let nodePrefix: [UInt8] = [1]
        hashes.withUnsafeMutableBytes { buffer in
            while count > 1 {
                for pair in 0..<(count / 2) {
                    var hasher = SHA256()
                    hasher.update(data: nodePrefix)
                    hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[(pair * 64)..<(pair * 64 + 64)]))
                    hasher.finalize().withUnsafeBytes { digest in
                        UnsafeMutableRawBufferPointer(rebasing: buffer[(pair * 32)..<(pair * 32 + 32)]).copyMemory(from: digest)
                    }
                }
                count /= 2
            }
        }
        return MerkleTree.Hash(hashes[0..<32])
    }

    /// The stored tiles of `indexes` (those that exist), read in one statement per `tilesPerSelect`.
    static func tiles(_ indexes: [Int64], on connection: any DatabaseConnection) async throws -> [Int64: [UInt8]] {
        var found: [Int64: [UInt8]] = [:]
        for start in stride(from: 0, to: indexes.count, by: tilesPerSelect) {
            let part = Array(indexes[start..<min(start + tilesPerSelect, indexes.count)])
            for row in try await connection.query(
                "SELECT idx, hashes FROM audit_log_tiles WHERE idx IN (\(list: part))") {
                found[try row.int64("idx")] = try row.blob("hashes")
            }
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
        for eventID in Set(eventIDs) {
            if let row = try await connection.queryOne(
                "SELECT first_event_id, first_index, count FROM audit_log_leaf_runs WHERE first_event_id <= \(eventID) ORDER BY first_event_id DESC LIMIT 1"),
                let index = LeafRun(firstEventID: try row.int64("first_event_id"), firstIndex: try row.int64("first_index"), count: try row.int64("count")).index(of: eventID) {
                found[eventID] = index
            }
        }
        return found
    }

    /// SQL for the leaf index of the audit row `e` (NULL when it is not a leaf), for a query that
    /// names `audit_events` as `e`: its run's first index plus its distance from the run's first row.
    public static let logIndexColumn = """
        (SELECT r.first_index + (e.id - r.first_event_id) FROM audit_log_leaf_runs r
         WHERE r.first_event_id = (SELECT max(first_event_id) FROM audit_log_leaf_runs WHERE first_event_id <= e.id)
           AND e.id < r.first_event_id + r.count)
        """
}
