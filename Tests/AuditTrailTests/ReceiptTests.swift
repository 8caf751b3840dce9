@testable import AuditTrail
import Crypto
import DatabaseAccess
import Foundation
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import SQLiteStore
import Testing

/// The trail as a transparency log, on both stores and in each state of a database's life:
/// every row a leaf in settled order, receipts that `AuditReceipt.check` and the Go checksum
/// database's own verifier accept, and that both refuse once a row byte, a proof hash or the
/// note's key is changed; consistency proofs between checkpoints; `audit verify` naming a
/// changed node, leaf or note.
@Suite("Receipts: the trail as a transparency log", .serialized)
struct ReceiptTests {
    typealias World = TamperMatrixTests.World

    /// The log's note key for `world`'s signing key (the database's own origin).
    static func noteKey(_ world: World) async throws -> SignedNote.VerifierKey {
        let key = try AuditSigningKey.load(path: world.keyPath)
        return key.noteVerifierKey(origin: try await world.audit.origin())
    }

    /// The request the Go verifier takes for `receipt`'s inclusion proof and note.
    static func goRequest(_ receipt: AuditReceipt, key: SignedNote.VerifierKey) throws -> [String: Any] {
        let newest = try #require(receipt.rows.last)
        return [
            "key": key.description, "note": receipt.checkpoint,
            "leaf": Data(try #require(Hex.decode(newest.hash))).base64EncodedString(), "index": receipt.inclusion.logIndex,
            "inclusion": receipt.inclusion.hashes,
        ]
    }

    /// Every row of the live trail is a leaf, in id order, numbered 0 … n-1, and the stored
    /// tree's root is the one computed from the rows' hashes alone.
    static func expectLeavesAreTheRows(_ world: World) async throws {
        try await world.database.read { connection in
            let head = try await AuditLogTree.head(on: connection)
            let leaves = try await connection.query(
                "SELECT \(raw: AuditLogTree.logIndexColumn) AS log_index, e.hash FROM audit_events e WHERE e.id <= \(head.integratedUntilID) ORDER BY e.id")
            #expect(leaves.allSatisfy { $0.optionalInt64(0) != nil }, "every live row up to the head is a leaf")
            let live = try await connection.queryOne("SELECT count(*) FROM audit_events WHERE id <= \(head.integratedUntilID)")?.int64(0)
            #expect(Int64(leaves.count) == live, "every live row up to the head is a leaf")
            // Leaves of archived rows stay: the live ones are a subset of 0 … size-1, in id order.
            let indexes = try leaves.map { try $0.int64(0) }
            #expect(indexes == indexes.sorted() && (indexes.last ?? -1) < head.size)
            if indexes.count == Int(head.size) {
                let data = try leaves.map { try #require(Hex.decode(try $0.string(1))) }
                let memory = TransparencyLogTests.Leaves(data)
                let expected = MerkleTree.root(size: head.size, subtree: memory.subtree)
                #expect(try await AuditLogTree.root(size: head.size, on: connection) == expected)
            }
        }
    }

    @Test("a session's receipt checks out here and in Go, in every state of a database's life; a row byte, a proof hash or another key's note fails in both, each step named", arguments: TestStore.all, [TamperMatrixTests.State.fresh, .afterErasure, .afterArchive, .afterKeyRotation])
    func receipts(store: TestStore, state: TamperMatrixTests.State) async throws {
        let world = try await World(store, state)
        do {
            try await Self.expectLeavesAreTheRows(world)
            let key = try await Self.noteKey(world)
            guard case .receipt(let receipt) = try await world.audit.receipt(sessionID: world.target) else {
                Issue.record("no receipt for the target session")
                await world.close()
                return
            }
            let trailRows = try await world.database.read { try await $0.queryOne("SELECT count(*) FROM audit_events WHERE session_id = \(world.target)")?.int(0) } ?? 0
            #expect(trailRows >= 5 && receipt.rows.map(\.seq) == Array(1...trailRows))
            #expect(receipt.previousHash == nil && receipt.rows.allSatisfy { !$0.redacted })
            let checked = try receipt.check(key: key)
            #expect(checked.rows == trailRows && checked.treeSize == receipt.inclusion.treeSize && checked.redacted == 0)
            let go = try await GoTlogVerifier.check(try Self.goRequest(receipt, key: key))
            #expect(go.status == 0 && go.stdout == "ok\n", "\(go.output)")

            // One byte of one row.
            var altered = receipt
            var content = try #require(altered.rows[2].content)
            content.detail = content.detail.replacingOccurrences(of: "1", with: "2")
            if content == receipt.rows[2].content { content.at = content.at.replacingOccurrences(of: "Z", with: "z") }
            altered.rows[2].content = content
            #expect(throws: AuditReceipt.Problem.self) { try altered.check(key: key) }
            #expect((try? altered.check(key: key)) == nil)
            #expect(Self.step(altered, key) == "rows")
            // The newest row's hash itself (the leaf), then both proofs.
            altered = receipt
            altered.rows[altered.rows.count - 1].hash = String(receipt.rows[receipt.rows.count - 1].hash.reversed())
            #expect(["rows", "inclusion"].contains(Self.step(altered, key)))
            var request = try Self.goRequest(altered, key: key)
            #expect(try await GoTlogVerifier.check(request).status == 1, "a changed leaf passed in Go")
            if !receipt.inclusion.hashes.isEmpty {
                altered = receipt
                var bytes = try #require(Data(base64Encoded: altered.inclusion.hashes[0]))
                bytes[3] ^= 0x10
                altered.inclusion.hashes[0] = bytes.base64EncodedString()
                #expect(Self.step(altered, key) == "inclusion")
                request = try Self.goRequest(altered, key: key)
                #expect(try await GoTlogVerifier.check(request).status == 1, "a changed proof passed in Go")
            }
            // The same checkpoint signed by another key under the same name.
            altered = receipt
            let note = try SignedNote(parsing: receipt.checkpoint)
            altered.checkpoint = try SignedNote.sign(note.text, with: [(key.name, Curve25519.Signing.PrivateKey())]).encoded
            #expect(Self.step(altered, key) == "signature")
            request = try Self.goRequest(altered, key: key)
            let otherKey = try await GoTlogVerifier.check(request)
            #expect(otherKey.status == 1 && otherKey.stdout.contains("note"), "\(otherKey.output)")

            switch state {
            case .afterArchive:
                // An archived session's receipt: rows from the file, leaves from the live log.
                let path = try #require(world.archives.first)
                let file = try Connection(path: path, mode: .readOnly)
                let archivedID = try #require(try await file.queryOne("SELECT session_id FROM audit_events WHERE session_id NOT IN ('api', 'operator') LIMIT 1")?.string(0))
                let rows = try await AuditReceipts.archivedRows(sessionID: archivedID, archive: file)
                guard case .receipt(let archived) = try await world.audit.receipt(sessionID: archivedID, archived: rows) else {
                    Issue.record("no receipt for the archived session")
                    break
                }
                #expect(try archived.check(key: key).rows == archived.rows.count)
                let archivedGo = try await GoTlogVerifier.check(try Self.goRequest(archived, key: key))
                #expect(archivedGo.status == 0, "\(archivedGo.output)")
            case .afterKeyRotation:
                // The rotation's checkpoint carries both keys' signatures; the next ones the new key's.
                let notes = try await world.database.read { connection in
                    try await connection.query("SELECT note, public_key, next_public_key FROM audit_checkpoints WHERE note IS NOT NULL ORDER BY number")
                        .map { (try $0.string(0), try $0.string(1), $0.optionalString(2)) }
                }
                let rotation = try #require(notes.first { $0.2 != nil })
                let rotated = try SignedNote(parsing: rotation.0)
                #expect(rotated.signatures.count == 2)
                for hex in [rotation.1, try #require(rotation.2)] {
                    let verifier = SignedNote.VerifierKey(name: key.name, publicKey: try #require(Hex.decode(hex)))
                    #expect(rotated.isSigned(by: verifier))
                    let goRotated = try await GoTlogVerifier.check(["key": verifier.description, "note": rotation.0])
                    #expect(goRotated.status == 0, "\(goRotated.output)")
                }
                #expect(key.publicKey == Hex.decode(try #require(rotation.2)), "the key file holds the new key")
            case .afterErasure:
                // The erased user's rows still chain: their hashes cover the user's id, never the name.
                let erasedRows = try await world.database.read { try await $0.queryOne("SELECT count(*) FROM audit_events e JOIN users u ON u.id = e.user_id WHERE u.erased_at IS NOT NULL")?.int(0) }
                #expect((erasedRows ?? 0) > 0)
            default:
                break
            }

            // Consistency from the first signed tree to the newest, here and in Go.
            let sizes = try await world.database.read { connection in
                try await connection.query("SELECT tree_size, note FROM audit_checkpoints WHERE note IS NOT NULL ORDER BY number").map { (try $0.int64(0), try $0.string(1)) }
            }
            let first = try #require(sizes.first), newest = try #require(sizes.last)
            #expect(first.0 >= 1 && newest.0 > first.0)
            let proof = try await world.audit.consistency(from: first.0, to: newest.0)
            let oldRoot = try LogCheckpoint(parsing: try SignedNote(parsing: first.1).text).root
            let newRoot = try LogCheckpoint(parsing: try SignedNote(parsing: newest.1).text).root
            #expect(MerkleTree.verifyConsistency(old: first.0, new: newest.0, oldRoot: oldRoot, newRoot: newRoot, proof: proof))
            if state != .afterKeyRotation {
                let goConsistency = try await GoTlogVerifier.check([
                    "key": key.description, "note": newest.1, "oldNote": first.1, "consistency": proof.map { Data($0).base64EncodedString() },
                ])
                #expect(goConsistency.status == 0, "\(goConsistency.output)")
            }
            await #expect(throws: PhotosError.self) { try await world.audit.consistency(from: 0, to: newest.0) }
            await #expect(throws: PhotosError.self) { try await world.audit.consistency(from: 1, to: newest.0 + 1) }
        } catch {
            await world.close()
            throw error
        }
        await world.close()
    }

    /// The step a receipt's JSON fails at as `check-receipt` reads it (strictly, then checked).
    static func step(json: [String: Any], _ key: SignedNote.VerifierKey) throws -> (step: String?, checked: AuditReceipt.Checked?) {
        do {
            let receipt = try AuditReceipt.decodeStrictly(try JSONSerialization.data(withJSONObject: json))
            return (nil, try receipt.check(key: key))
        } catch let problem as AuditReceipt.Problem {
            return (problem.step, nil)
        }
    }

    @Test("what an attacker wrote into a receipt this week is refused: a name where the hash has none, a redacted row that shows a forged detail (the newest too), a row's own leaf index, a chain cut without its start; a row redacted honestly is named", arguments: TestStore.all)
    func alterations(store: TestStore) async throws {
        let world = try await World(store, .fresh)
        do {
            let key = try await Self.noteKey(world)
            guard case .receipt(let receipt) = try await world.audit.receipt(sessionID: world.target) else {
                Issue.record("no receipt for the target session")
                await world.close()
                return
            }
            let genuine = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(receipt)) as? [String: Any])
            #expect(try Self.step(json: genuine, key).step == nil)
            func altered(_ change: (inout [[String: Any]]) -> Void) -> [String: Any] {
                var json = genuine
                var rows = json["rows"] as? [[String: Any]] ?? []
                change(&rows)
                json["rows"] = rows
                return json
            }
            let signedIn = (genuine["rows"] as? [[String: Any]] ?? []).firstIndex { $0["userId"] is Int } ?? 1
            let last = receipt.rows.count - 1, middle = receipt.rows.count / 2
            // A name no hash covers (the row names its user by id; its hash covers a null name).
            #expect(try Self.step(json: altered { $0[signedIn]["username"] = "mallory" }, key).step == "rows")
            // A row marked redacted that still shows a (forged) detail: the newest and a middle one.
            for index in [last, middle] {
                #expect(try Self.step(json: altered { $0[index]["redacted"] = true; $0[index]["detail"] = #"{"forged":true}"# }, key).step == "format")
            }
            // A row's own leaf index: not covered by the proof, not a field.
            #expect(try Self.step(json: altered { $0[middle]["logIndex"] = 0 }, key).step == "format")
            // Redacted honestly (seq and hash only): still checks — the hashes chain — and is named.
            let honest = try Self.step(json: altered { rows in rows[last] = ["seq": rows[last]["seq"] ?? 0, "hash": rows[last]["hash"] ?? "", "redacted": true] }, key)
            #expect(honest.step == nil && honest.checked?.redactedSeqs == [receipt.rows[last].seq])
            // Rows cut from the front: the chain has no start without previousHash; with a false one it fails.
            var cut = altered { $0.removeFirst(2) }
            #expect(try Self.step(json: cut, key).step == "chain")
            cut["previousHash"] = receipt.rows[1].hash
            #expect(try Self.step(json: cut, key).step == nil)
            cut["previousHash"] = receipt.rows[0].hash
            #expect(try Self.step(json: cut, key).step == "rows")
            // A previousHash on a receipt that starts at seq 1.
            var extra = genuine
            extra["previousHash"] = receipt.rows[0].hash
            #expect(try Self.step(json: extra, key).step == "chain")
        } catch {
            await world.close()
            throw error
        }
        await world.close()
    }

    /// The step `receipt.check` fails at, or nil.
    static func step(_ receipt: AuditReceipt, _ key: SignedNote.VerifierKey) -> String? {
        do {
            _ = try receipt.check(key: key)
            return nil
        } catch let problem as AuditReceipt.Problem {
            return problem.step
        } catch {
            return "\(error)"
        }
    }

    @Test("audit verify names a changed node, a changed leaf, a cut tile, a leaf removed and an altered note; rows integrated in small batches give the tree one batch gives", arguments: TestStore.all)
    func verifyChecksTheLog(store: TestStore) async throws {
        for tampering in ["node", "leaf", "cutTile", "removedLeaf", "note"] {
            let world = try await World(store, .fresh)
            do {
                if tampering == "node" {
                    // A stored node: level 6, the hash of the first 64 leaves (and nodes above it).
                    while try await world.database.read({ try await AuditLogTree.head(on: $0).size }) < AuditLogTree.tileWidth + 10 {
                        for _ in 0..<10 { _ = try await world.journey(signIn: false) }
                        _ = try await world.audit.checkpoint()
                    }
                }
                #expect(try await world.verify() == nil)
                let postgres = world.test.postgres != nil
                let unlock = postgres
                    ? "ALTER TABLE audit_log_nodes DISABLE TRIGGER USER; ALTER TABLE audit_log_tiles DISABLE TRIGGER USER; ALTER TABLE audit_log_leaf_runs DISABLE TRIGGER USER; ALTER TABLE audit_checkpoints DISABLE TRIGGER USER;"
                    : """
                    DROP TRIGGER IF EXISTS audit_log_nodes_no_update; DROP TRIGGER IF EXISTS audit_log_tiles_only_extended;
                    DROP TRIGGER IF EXISTS audit_log_leaf_runs_no_delete; DROP TRIGGER IF EXISTS audit_checkpoints_no_update;
                    """
                let flip = postgres ? "set_byte(hash, 0, get_byte(hash, 0) # 1)" : "zeroblob(32)"
                let sql = switch tampering {
                case "node": "UPDATE audit_log_nodes SET hash = \(flip) WHERE level = 6 AND idx = 0;"
                // Leaf 3's hash is bytes 96 ..< 128 of tile 0.
                case "leaf" where postgres: "UPDATE audit_log_tiles SET hashes = set_byte(hashes, 96, get_byte(hashes, 96) # 1) WHERE idx = 0;"
                case "leaf": "UPDATE audit_log_tiles SET hashes = CAST(substr(hashes, 1, 96) || zeroblob(32) || substr(hashes, 129) AS BLOB) WHERE idx = 0;"
                case "cutTile" where postgres:
                    "UPDATE audit_log_tiles SET hashes = substring(hashes FROM 1 FOR length(hashes) - 32) WHERE idx = (SELECT max(idx) FROM audit_log_tiles);"
                case "cutTile": "UPDATE audit_log_tiles SET hashes = substr(hashes, 1, length(hashes) - 32) WHERE idx = (SELECT max(idx) FROM audit_log_tiles);"
                // The run of every row split around leaf 2, which is then no row's.
                case "removedLeaf":
                    """
                    CREATE TEMPORARY TABLE removed AS SELECT first_event_id, count FROM audit_log_leaf_runs WHERE first_index = 0;
                    DELETE FROM audit_log_leaf_runs WHERE first_index = 0;
                    INSERT INTO audit_log_leaf_runs (first_event_id, first_index, count) SELECT first_event_id, 0, 2 FROM removed;
                    INSERT INTO audit_log_leaf_runs (first_event_id, first_index, count) SELECT first_event_id + 3, 3, count - 3 FROM removed;
                    """
                default: "UPDATE audit_checkpoints SET note = replace(note, '—', '-') WHERE number = (SELECT max(number) FROM audit_checkpoints);"
                }
                try await world.database.write { connection in try await connection.executeScript(unlock + "\n" + sql) }
                let problem = try #require(try await world.verify(), "\(store): a \(tampering) went unnoticed")
                let named = switch tampering {
                case "node": problem.reason.contains("node (6, 0)")
                case "leaf": problem.reason.contains("leaf 3 is not the hash of its row")
                case "cutTile": problem.reason.contains("newest tile holds")
                case "removedLeaf": problem.reason.contains("leaf 2 is missing")
                default: problem.reason.contains("note") && problem.checkpoint != nil
                }
                #expect(named, "\(store) \(tampering): \(problem)")
            } catch {
                await world.close()
                throw error
            }
            await world.close()
        }

        // New rows made leaves 3 at a time give the tree computed from all the rows at once.
        let world = try await World(store, .fresh)
        do {
            _ = try await world.journey(signIn: true)
            _ = try await world.journey(signIn: false)
            let settled = try await AuditChains.readSettled(world.database) { _, settled in settled }
            var batches = 0
            while try await world.database.write({ try await AuditLogTree.integrate(until: settled, limit: 3, on: $0).more }) { batches += 1 }
            #expect(batches > 3)
            let (head, rowHashes) = try await world.database.read { connection in
                (try await AuditLogTree.head(on: connection),
                 try await connection.query("SELECT hash FROM audit_events ORDER BY id").map { try #require(Hex.decode(try $0.string(0))) })
            }
            #expect(Int64(rowHashes.count) == head.size && head.integratedUntilID == settled)
            let memory = TransparencyLogTests.Leaves(rowHashes)
            let root = try await world.database.read { try await AuditLogTree.root(size: head.size, on: $0) }
            #expect(root == MerkleTree.root(size: head.size, subtree: memory.subtree))
            // And the next checkpoint signs that tree, which verify accepts.
            let checkpoint = try #require(try await world.audit.checkpoint(always: true))
            #expect(checkpoint.treeSize == head.size && checkpoint.treeRoot == Hex.encode(root))
            #expect(try await world.verify() == nil)
        } catch {
            await world.close()
            throw error
        }
        await world.close()
    }
}
