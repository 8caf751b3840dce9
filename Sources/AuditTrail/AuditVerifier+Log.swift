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

    /// Checks the log: its runs number the leaves without gaps, in row id order, and every row up
    /// to the head's `integratedUntilID` is a leaf; each leaf's hash (in its tile) is its row's
    /// hash; the tiles are full but the newest; every stored node (level 6 and above) is the hash
    /// of its leaves or of its two children; and every checkpoint's tree is the stored tree's root
    /// at its size, with a note that says so, signed under its origin by the checkpoint's key
    /// (and the next one on a rotation). Returns the leaves checked.
    func checkLog(_ trees: [SignedTree]) async throws -> Int {
        func fail(_ reason: String) -> Failure { Failure(problem: AuditChains.Problem(reason: "the transparency log: " + reason)) }
        let head = try await AuditLogTree.head(on: connection)
        let width = AuditLogTree.tileWidth
        // The tiles: all full but the newest, which holds what the size says.
        let tileCount = (head.size + width - 1) / width
        let storedTiles = try await connection.queryOne("SELECT count(*) AS tiles FROM audit_log_tiles")?.int64("tiles") ?? -1
        guard storedTiles == tileCount else {
            throw fail("holds \(storedTiles) tiles where a tree of \(head.size) leaves has \(tileCount) (tiles were added or removed)")
        }
        if head.size % width != 0 {
            let newest = try await AuditLogTree.tiles([head.size / width], on: connection)[head.size / width]?.count ?? 0
            guard newest == Int(head.size % width) * 32 else {
                throw fail("its newest tile holds \(newest / 32) hashes where a tree of \(head.size) leaves has \(head.size % width) (altered)")
            }
        }
        var tiles = TileReader(connection: connection, size: head.size)
        // Runs in row id order number the leaves 0, 1, 2 … without gaps (so each index is used
        // once), never past the head's `integratedUntilID`; every row up to it is in a run, and
        // each live row's leaf is its hash. (Archived rows keep their leaves: their hashes were
        // checked when they moved, and their archive's statement signs them.)
        var runs = RunReader(connection: connection)
        var expected: Int64 = 0
        var afterEvent: Int64 = 0
        var checked = 0
        var run = try await runs.next()
        var nextEvent: Int64 = 0
        func checkRun(_ run: AuditLogTree.LeafRun) throws {
            guard run.firstEventID >= nextEvent else {
                throw fail("row \(run.firstEventID) is two leaves (runs overlap: a leaf was added)")
            }
            nextEvent = run.firstEventID + run.count
            guard run.firstIndex == expected else {
                throw fail("leaf \(expected) is missing: the leaves, in row order, go from \(expected - 1) to \(run.firstIndex) (not numbered without gaps: a leaf was removed or renumbered)")
            }
            guard run.firstEventID + run.count - 1 <= head.integratedUntilID else {
                throw fail("row \(run.firstEventID + run.count - 1) is a leaf, past the head's \(head.integratedUntilID) (a leaf was added)")
            }
            expected += run.count
        }
        if let run { try checkRun(run) }
        while true {
            let rows = try await connection.query(
                "SELECT id, session_id, seq, hash FROM audit_events WHERE id > \(afterEvent) AND id <= \(head.integratedUntilID) ORDER BY id LIMIT \(Self.logPage)")
            for row in rows {
                let id = try row.int64("id")
                while let current = run, current.firstEventID + current.count <= id {
                    run = try await runs.next()
                    if let run { try checkRun(run) }
                }
                guard let index = run?.index(of: id) else {
                    throw Failure(problem: AuditChains.Problem(
                        rowID: id, sessionID: try row.optionalString("session_id"), seq: try row.optionalInt("seq"),
                        reason: "is not a leaf of the transparency log, whose head says every row up to id \(head.integratedUntilID) is (a leaf was removed, or the row inserted)"))
                }
                guard let stored = try await tiles.leaf(index) else { throw fail("leaf \(index) has no stored hash (a tile was cut or removed)") }
                guard let rowHash = Hex.decode(try row.string("hash")), MerkleTree.leafHash(rowHash) == stored else {
                    throw fail("leaf \(index) is not the hash of its row (the row's hash or the leaf was altered)")
                }
                checked += 1
                afterEvent = id
            }
            if rows.count < Int(Self.logPage) { break }
        }
        while run != nil {
            run = try await runs.next()
            if let run { try checkRun(run) }
        }
        guard expected == head.size else {
            throw fail("holds \(expected) leaves where its head says \(head.size) (leaves were added or removed, numbered without gaps or not)")
        }
        // No node below level 6 is stored; each of level 6 is the hash of its leaves (in a tile), each
        // above the hash of its children, level by level.
        let lowest = AuditLogTree.lowestStoredLevel
        let below = try await connection.queryOne("SELECT count(*) AS nodes FROM audit_log_nodes WHERE level < \(lowest)")?.int64("nodes") ?? -1
        guard below == 0 else { throw fail("holds \(below) nodes below level \(lowest), which its tiles hold (added)") }
        var level = lowest
        while head.size >> level > 0 {
            let count = head.size >> level
            let stored = try await connection.queryOne("SELECT count(*) AS nodes FROM audit_log_nodes WHERE level = \(level)")?.int64("nodes") ?? -1
            guard stored == count else { throw fail("level \(level) holds \(stored) nodes where a tree of \(head.size) leaves has \(count)") }
            let page = Self.logPage >> Int64(lowest)
            var start: Int64 = 0
            while start < count {
                let end = min(start + page, count)
                let parents = try await connection.query(
                    "SELECT idx, hash FROM audit_log_nodes WHERE level = \(level) AND idx >= \(start) AND idx < \(end) ORDER BY idx")
                guard parents.count == Int(end - start) else { throw fail("nodes are missing at level \(level) between \(start) and \(end)") }
                var computed: [MerkleTree.Hash] = []
                if level == lowest {
                    // Node (lowest, i) is the hash of leaves i·2^lowest …, in tile i·2^lowest / 256.
                    let perTile = AuditLogTree.tileWidth >> Int64(lowest)
                    let found = try await AuditLogTree.tiles(Array((start / perTile)...((end - 1) / perTile)), on: connection)
                    for index in start..<end {
                        guard let tile = found[index / perTile],
                              let hash = AuditLogTree.hashInTile(tile, from: (index % perTile) << Int64(lowest), level: lowest) else {
                            throw fail("tile \(index / perTile) does not hold the leaves of node (\(lowest), \(index)) (cut)")
                        }
                        computed.append(hash)
                    }
                } else {
                    let children = try await connection.query(
                        "SELECT idx, hash FROM audit_log_nodes WHERE level = \(level - 1) AND idx >= \(start * 2) AND idx < \(end * 2) ORDER BY idx")
                    guard children.count == Int(end - start) * 2 else { throw fail("nodes are missing at level \(level - 1) between \(start * 2) and \(end * 2)") }
                    for offset in 0..<Int(end - start) {
                        guard let left = MerkleTree.Hash(try children[offset * 2].blob("hash")), let right = MerkleTree.Hash(try children[offset * 2 + 1].blob("hash")) else {
                            throw fail("a node of level \(level - 1) between \(start * 2) and \(end * 2) is not 32 bytes (altered)")
                        }
                        computed.append(MerkleTree.nodeHash(left, right))
                    }
                }
                for (offset, parent) in parents.enumerated() where MerkleTree.Hash(try parent.blob("hash")) != computed[offset] {
                    throw fail("node (\(level), \(try parent.int64("idx"))) is not the hash of its \(level == lowest ? "leaves" : "children") (altered)")
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

extension AuditVerifier {
    /// The leaves' hashes read tile by tile, in pages, as the check walks the leaves in order.
    struct TileReader {
        let connection: any DatabaseConnection
        let size: Int64
        /// The first tile of the page read, none before the first read.
        var first: Int64?
        var page: [Int64: [UInt8]] = [:]

        init(connection: any DatabaseConnection, size: Int64) {
            self.connection = connection
            self.size = size
        }

        /// The stored hash of leaf `index`, or nil when its tile does not hold it.
        mutating func leaf(_ index: Int64) async throws -> MerkleTree.Hash? {
            let tile = index / AuditLogTree.tileWidth
            if page[tile] == nil, first.map({ tile < $0 || tile >= $0 + Int64(AuditLogTree.tilesPerSelect) }) ?? true {
                first = tile
                let last = min(tile + Int64(AuditLogTree.tilesPerSelect), (size + AuditLogTree.tileWidth - 1) / AuditLogTree.tileWidth)
                page = try await AuditLogTree.tiles(Array(tile..<max(last, tile + 1)), on: connection)
            }
            guard let hashes = page[tile] else { return nil }
            let offset = Int(index % AuditLogTree.tileWidth) * 32
            return offset + 32 <= hashes.count ? MerkleTree.Hash(hashes[offset..<(offset + 32)]) : nil
        }
    }

    /// The leaf runs in row id order, read in pages.
    struct RunReader {
        let connection: any DatabaseConnection
        var buffered: [AuditLogTree.LeafRun] = []
        var after: Int64 = -1
        var done = false

        init(connection: any DatabaseConnection) {
            self.connection = connection
        }

        mutating func next() async throws -> AuditLogTree.LeafRun? {
            if buffered.isEmpty, !done {
                let rows = try await connection.query(
                    "SELECT first_event_id, first_index, count FROM audit_log_leaf_runs WHERE first_event_id > \(after) ORDER BY first_event_id LIMIT \(AuditVerifier.logPage)")
                buffered = try rows.reversed().map {
                    AuditLogTree.LeafRun(firstEventID: try $0.int64("first_event_id"), firstIndex: try $0.int64("first_index"), count: try $0.int64("count"))
                }
                done = rows.count < Int(AuditVerifier.logPage)
                if let last = buffered.first { after = last.firstEventID }
            }
            return buffered.popLast()
        }
    }
}
