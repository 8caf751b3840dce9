@testable import AuditTrail
import DatabaseAccess
import Foundation
import PhotosModel
import PhotosTestSupport
import Testing

/// Migration 0023 moves the transparency log from 0020's layout — a row per leaf
/// (`audit_log_leaves`) and a row per complete subtree at every level (`audit_log_nodes`) — into
/// tiles of 256 leaf hashes, the nodes of level 6 and above, and runs of row ids. The test writes a
/// database with today's binary, puts its log back into the old layout (the tables as 0020 made
/// them, filled with what 0022's photosd wrote: every leaf and every node), forgets the migration,
/// and opens the database again.
@Suite("Migration 0023: the log's tree moved into tiles")
struct LogTilesMigrationTests {
    @Test("a subtree's hash from a tile is the tree's: every level, every aligned offset; a partial tile gives none past its end")
    func hashInTile() {
        let leaves = TransparencyLogTests.Leaves((0..<256).map { index in (0..<32).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) } })
        let tile = leaves.hashes.flatMap { $0 }
        for level in 0...AuditLogTree.tileHeight {
            for index in 0..<(Int64(256) >> Int64(level)) {
                #expect(AuditLogTree.hashInTile(tile, from: index << Int64(level), level: level) == leaves.subtree(level, index), "(\(level), \(index))")
            }
        }
        let partial = Array(tile.prefix(100 * 32))
        #expect(AuditLogTree.hashInTile(partial, from: 64, level: 5) == leaves.subtree(5, 2))
        #expect(AuditLogTree.hashInTile(partial, from: 96, level: 5) == nil)
        #expect(AuditLogTree.hashInTile(partial, from: 99, level: 0) == leaves.subtree(0, 99))
        #expect(AuditLogTree.hashInTile(partial, from: 100, level: 0) == nil)
    }

    @Test("a log in 0022's layout (a row per leaf, a row per node at every level) migrates to tiles and runs: the same root and leaf indexes, audit verify passes, and the partial tile grows on", arguments: TestStore.all)
    func fromTheNodeTable(store: TestStore) async throws {
        // Archived rows keep their leaves: runs cover ids no longer in audit_events.
        let world = try await TamperMatrixTests.World(store, .afterArchive)
        do {
            // More than two tiles, so a partial tile is carried over.
            while try await world.database.read({ try await AuditLogTree.head(on: $0).size }) < 2 * AuditLogTree.tileWidth + 100 {
                for _ in 0..<10 { _ = try await world.journey(signIn: false) }
                _ = try await world.audit.checkpoint()
            }
            #expect(try await world.verify() == nil)
            let postgres = world.test.postgres != nil
            // The log as it is.
            let (head, root, leaves, tiles, upper) = try await world.database.read { connection in
                let head = try await AuditLogTree.head(on: connection)
                let root = try await AuditLogTree.root(size: head.size, on: connection)
                let runs = try await connection.query("SELECT first_event_id, first_index, count FROM audit_log_leaf_runs ORDER BY first_event_id").map {
                    AuditLogTree.LeafRun(firstEventID: try $0.int64("first_event_id"), firstIndex: try $0.int64("first_index"), count: try $0.int64("count"))
                }
                let leaves = runs.flatMap { run in (0..<run.count).map { (eventID: run.firstEventID + $0, index: run.firstIndex + $0) } }
                let tiles = try await connection.query("SELECT idx, hashes FROM audit_log_tiles ORDER BY idx").map { (try $0.int64("idx"), try $0.blob("hashes")) }
                let upper = try await connection.query("SELECT level, idx, hash FROM audit_log_nodes ORDER BY level, idx").map {
                    (try $0.int("level"), try $0.int64("idx"), MerkleTree.Hash(try $0.blob("hash")))
                }
                return (head, root, leaves, tiles, upper)
            }
            let hashes = tiles.flatMap(\.1)
            let leafHashes = try (0..<Int(head.size)).map { try #require(MerkleTree.Hash(hashes[($0 * 32)..<($0 * 32 + 32)])) }
            #expect(leaves.map(\.index) == Array(0..<head.size))
            #expect(upper.allSatisfy { $0.0 >= AuditLogTree.lowestStoredLevel } && !upper.isEmpty)

            // 0022's layout: every complete subtree of levels 0 to 5 as a node too, a row per leaf.
            let memory = TransparencyLogTests.Leaves(leafHashes: leafHashes)
            let nodes = (0..<AuditLogTree.lowestStoredLevel).flatMap { level in
                (0..<(head.size >> Int64(level))).map { index in (level, index, memory.subtree(level, index)) }
            }
            try await world.database.write { connection in
                try await connection.executeScript(
                    """
                    DROP VIEW audit_log_leaves; DROP TABLE audit_log_tiles; DROP TABLE audit_log_leaf_runs;
                    \(postgres ? "DROP FUNCTION audit_log_tiles_only_extended();" : "")
                    CREATE TABLE audit_log_leaves (event_id \(postgres ? "BIGINT" : "INTEGER") PRIMARY KEY, log_index \(postgres ? "BIGINT" : "INTEGER") NOT NULL);
                    DELETE FROM schema_migrations WHERE version = 23;
                    """)
                try await connection.insert(
                    into: "audit_log_leaves", columns: "event_id, log_index", rows: leaves.map { [$0.eventID, $0.index] }, perStatement: 300)
                try await connection.insert(
                    into: "audit_log_nodes", columns: "level, idx, hash", rows: nodes.map { [$0.0, $0.1, DatabaseValue.blob($0.2.bytes)] }, perStatement: 300)
            }

            // Opened again: 0023 runs.
            try await world.restart(checkpointFirst: false)
            try await world.database.read { connection in
                #expect(try await AuditLogTree.head(on: connection) == head)
                #expect(try await AuditLogTree.root(size: head.size, on: connection) == root)
                let migrated = try await connection.query("SELECT idx, hashes FROM audit_log_tiles ORDER BY idx").map { (try $0.int64("idx"), try $0.blob("hashes")) }
                #expect(migrated.map(\.0) == tiles.map(\.0) && migrated.map(\.1) == tiles.map(\.1), "the tiles are the leaves' hashes, 256 to a row")
                let kept = try await connection.query("SELECT level, idx, hash FROM audit_log_nodes ORDER BY level, idx").map {
                    (try $0.int("level"), try $0.int64("idx"), MerkleTree.Hash(try $0.blob("hash")))
                }
                #expect(kept.map(\.0) == upper.map(\.0) && kept.map(\.1) == upper.map(\.1) && kept.map(\.2) == upper.map(\.2), "levels 6 and above stay, the rest go")
                let indexes = try await AuditLogTree.logIndexes(of: leaves.map(\.eventID), on: connection)
                #expect(leaves.allSatisfy { indexes[$0.eventID] == $0.index }, "every leaf keeps its row")
                let view = try await connection.query("SELECT event_id, log_index FROM audit_log_leaves ORDER BY event_id").map {
                    (try $0.int64("event_id"), try $0.int64("log_index"))
                }
                let live = Set(try await connection.query("SELECT id FROM audit_events WHERE id <= \(head.integratedUntilID)").map { try $0.int64("id") })
                #expect(view.map(\.0) == leaves.map(\.eventID).filter(live.contains) && view.allSatisfy { pair in indexes[pair.0] == pair.1 },
                        "the view audit_log_leaves names each live row's leaf")
                for index in [0, 255, 256, head.size - 1] {
                    #expect(try await AuditLogTree.inclusionProof(index: index, size: head.size, on: connection)
                        == MerkleTree.inclusionProof(index: index, size: head.size, subtree: memory.subtree))
                }
            }
            #expect(try await world.verify() == nil)
            // The log goes on from the carried-over partial tile.
            for _ in 0..<5 { _ = try await world.journey(signIn: false) }
            let next = try #require(try await world.audit.checkpoint())
            #expect(try #require(next.treeSize) > head.size)
            #expect(try await world.verify() == nil)
        } catch {
            await world.close()
            throw error
        }
        await world.close()
    }
}
