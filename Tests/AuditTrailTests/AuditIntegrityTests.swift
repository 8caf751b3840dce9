@testable import AuditTrail
import Crypto
import DatabaseAccess
import Foundation
import PhotosStorage
@testable import PhotosCore
import PhotosTestSupport
import SQLiteStore
import Testing
import PhotosModel

/// Audit integrity v2: a chain per trail and signed checkpoints. Each test tampers behind the
/// triggers' back — dropping them and editing with plain SQL, or rewriting hashes with the
/// algorithm but without the key — and expects `audit verify` to name the right row, trail or
/// checkpoint.
@Suite("Audit integrity")
struct AuditIntegrityTests {
    /// A database with trails s1, s2 (5 rows each) and s3 (2 rows), checkpoint 1 over them, then
    /// 2 more rows of s1 that no checkpoint covers yet.
    struct Fixture {
        let test: TestDatabase
        let audit: AuditService
        var key: AuditPublicKey { get throws { try #require(try audit.trustedKey(explicit: nil)) } }

        init() async throws {
            test = try TestDatabase()
            audit = AuditService(database: test.database, signingKeyPath: test.directory.file("audit-signing.key"))
            try await append("s1", 5)
            try await append("s2", 5)
            try await append("s3", 2)
            try #require(try await audit.checkpoint() != nil)
            try await append("s1", 2)
        }

        func append(_ trail: String, _ count: Int) async throws {
            try await test.database.write { connection in
                let writer = try await AuditTrailWriter(sessionID: trail, on: connection)
                for index in 0..<count {
                    writer.record(AuditEntry(actor: .client, coordinator: "app", step: .screenPush, screen: "photo", detail: ["photoId": .int(Int64(index))]))
                }
                _ = try await writer.write(at: ISO8601Timestamp.now())
            }
        }

        /// Drops every trigger, runs `sql`, and returns what verify finds.
        func tamper(_ sql: String) async throws -> AuditChains.Problem? {
            try await test.database.write { connection in
                try await connection.executeScript("""
                    DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;
                    DROP TRIGGER IF EXISTS audit_checkpoints_no_update; DROP TRIGGER IF EXISTS audit_checkpoints_no_delete;
                    """ + sql)
            }
            return try await verify()
        }

        func verify(publicKey: AuditPublicKey? = nil, against: AuditCheckpoint? = nil) async throws -> AuditChains.Problem? {
            try await audit.verify(publicKey: try publicKey ?? key, against: against).problem
        }

        /// Recomputes every hash of `trail` with the algorithm, as someone who can write the
        /// database but has no key would after editing it.
        func rehash(_ trail: String) async throws {
            try await test.database.write { connection in
                var previous = AuditChains.genesisHash
                let rows = try await connection.query(
                    "SELECT id, session_id, seq, at, actor, user_id, username, coordinator, step, screen, detail FROM audit_events WHERE session_id = \(trail) ORDER BY seq")
                for row in rows {
                    let hash = try AuditVerifier.fields(row).hash(previous: previous)
                    try await connection.execute("UPDATE audit_events SET prev_hash = \(previous), hash = \(hash) WHERE id = \(row.int64(0))")
                    previous = hash
                }
            }
        }

        func rowID(_ trail: String, _ seq: Int) async throws -> Int64 {
            try await test.database.read { try await $0.queryOne("SELECT id FROM audit_events WHERE session_id = \(trail) AND seq = \(seq)")?.int64(0) ?? 0 }
        }

        func close() { test.close() }
    }

    @Test("an untampered database verifies: rows, checkpoints, heads")
    func clean() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let result = try await f.audit.verify(publicKey: try f.key)
        #expect(result.isIntact, "\(String(describing: result.problem))")
        #expect(result.rowsChecked == 14)
        #expect(result.checkpointsChecked == 1)
        // The second checkpoint covers only what changed: s1.
        let second = try #require(try await f.audit.checkpoint())
        #expect(second.heads.map(\.trail) == ["s1"])
        #expect(second.heads.first?.seq == 7)
        #expect(try await f.audit.checkpoint() == nil, "nothing changed: no checkpoint")
        #expect(try await f.verify() == nil)
    }

    @Test("a row altered is named")
    func altered() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let id = try await f.rowID("s2", 3)
        let problem = try await f.tamper("UPDATE audit_events SET detail = '{\"photoId\":9}' WHERE id = \(id);")
        #expect(problem?.rowID == id)
        #expect(problem?.reason.contains("altered") == true)
    }

    @Test("a row inserted in the middle of a trail, even with the trail's hashes recomputed, is found")
    func inserted() async throws {
        let f = try await Fixture()
        defer { f.close() }
        _ = try await f.tamper("""
            UPDATE audit_events SET seq = seq + 100 WHERE session_id = 's2' AND seq >= 3;
            UPDATE audit_events SET seq = seq - 99 WHERE session_id = 's2' AND seq >= 103;
            INSERT INTO audit_events (session_id, seq, at, actor, step, detail, prev_hash, hash)
            SELECT 's2', 3, at, 'client', 'purchase.completed', '{}', '', '' FROM audit_events WHERE session_id = 's2' AND seq = 2;
            """)
        try await f.rehash("s2")
        let problem = try await f.verify()
        #expect(problem?.sessionID == "s2")
        #expect(problem?.seq == 5)
        #expect(problem?.reason.contains("checkpoint 1 signed") == true, "\(String(describing: problem))")
    }

    @Test("a row deleted from the middle of a trail is named by the gap")
    func deletedFromMiddle() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let next = try await f.rowID("s2", 4)
        let problem = try await f.tamper("DELETE FROM audit_events WHERE session_id = 's2' AND seq = 3;")
        #expect(problem?.rowID == next)
        #expect(problem?.reason.contains("seq 4 follows 2") == true)
    }

    @Test("the newest rows of a trail removed down into what a checkpoint covers")
    func truncated() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let problem = try await f.tamper("DELETE FROM audit_events WHERE session_id = 's2' AND seq >= 4;")
        #expect(problem?.sessionID == "s2")
        #expect(problem?.reason.contains("ends at seq 3 but checkpoint 1 signed it up to seq 5") == true, "\(String(describing: problem))")
    }

    @Test("the window: rows newer than the newest checkpoint, removed from a trail's end, go unnoticed; a checkpoint closes it")
    func truncatedInTheWindow() async throws {
        let f = try await Fixture()
        defer { f.close() }
        // s1's seq 6 and 7 came after checkpoint 1: their chain alone protects them, and
        // removing the end of a chain leaves a shorter chain (docs/reliability.md says so).
        #expect(try await f.tamper("DELETE FROM audit_events WHERE session_id = 's1' AND seq = 7;") == nil)
        let g = try await Fixture()
        defer { g.close() }
        try await g.audit.checkpoint()
        let problem = try await g.tamper("DELETE FROM audit_events WHERE session_id = 's1' AND seq = 7;")
        #expect(problem?.reason.contains("ends at seq 6 but checkpoint 2 signed it up to seq 7") == true, "\(String(describing: problem))")
    }

    @Test("a whole trail deleted, its head too, is named by the checkpoint that covered it")
    func trailDeleted() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let problem = try await f.tamper("DELETE FROM audit_events WHERE session_id = 's3';")
        #expect(problem?.sessionID == "s3")
        #expect(problem?.reason.contains("checkpoint 1 signed it up to seq 2 but it has no rows") == true, "\(String(describing: problem))")
    }

    @Test("every hash recomputed consistently without the key is caught at the checkpoint")
    func recomputedWithoutKey() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let id = try await f.rowID("s1", 2)
        _ = try await f.tamper("UPDATE audit_events SET detail = '{\"photoId\":42}' WHERE id = \(id);")
        for trail in ["s1", "s2", "s3"] { try await f.rehash(trail) }
        let problem = try await f.verify()
        #expect(problem?.sessionID == "s1")
        #expect(problem?.seq == 5)
        #expect(problem?.reason.contains("differs from what checkpoint 1 signed") == true, "\(String(describing: problem))")
    }

    @Test("a checkpoint altered, re-hashed or not, fails its signature or its hash")
    func checkpointAltered() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let problem = try await f.tamper("UPDATE audit_checkpoints SET heads = replace(heads, '\"seq\":5', '\"seq\":4') WHERE number = 1;")
        #expect(problem?.checkpoint == 1)
        #expect(problem?.reason.contains("altered") == true, "\(String(describing: problem))")
        // Re-signed with another key (all an attacker can do): the trusted key refuses it.
        let f2 = try await Fixture()
        defer { f2.close() }
        let forger = AuditSigningKey(Curve25519.Signing.PrivateKey())
        let forged = try await f2.test.database.write { connection -> AuditCheckpoint in
            var checkpoint = try await #require(try AuditCheckpoints.newest(on: connection))
            checkpoint.heads.removeAll { $0.trail == "s3" }
            checkpoint.signature = try forger.signatureHex(checkpoint.statement)
            checkpoint.hash = AuditCheckpoint.hash(statement: checkpoint.statement, signature: checkpoint.signature)
            return checkpoint
        }
        let problem2 = try await f2.tamper("""
            UPDATE audit_checkpoints SET heads = '\(String(decoding: try JSONEncoder().encode(forged.heads), as: UTF8.self))',
                signature = '\(forged.signature)', hash = '\(forged.hash)', public_key = '\(forger.publicKeyHex)' WHERE number = 1;
            """)
        #expect(problem2?.checkpoint == 1)
        #expect(problem2?.reason.contains("signature does not verify") == true, "\(String(describing: problem2))")
    }

    @Test("a checkpoint deleted from the middle is named")
    func checkpointDeleted() async throws {
        let f = try await Fixture()
        defer { f.close() }
        try await f.append("s2", 1)
        try await f.audit.checkpoint()
        try await f.append("s3", 1)
        try await f.audit.checkpoint()
        let problem = try await f.tamper("DELETE FROM audit_checkpoints WHERE number = 2;")
        #expect(problem?.checkpoint == 2)
        #expect(problem?.reason.contains("missing") == true)
    }

    @Test("a database whose checkpoints another key signed fails with a clear message")
    func otherKey() async throws {
        let f = try await Fixture()
        defer { f.close() }
        let other = AuditPublicKey(of: AuditSigningKey(Curve25519.Signing.PrivateKey()))
        let problem = try await f.verify(publicKey: other)
        #expect(problem?.checkpoint == 1)
        #expect(problem?.reason.contains("signature does not verify with public key") == true)
        let unkeyed = try await f.audit.verify(publicKey: nil).problem
        #expect(unkeyed?.reason.contains("no trusted public key") == true)
    }

    @Test("--against an exported checkpoint: the newest checkpoints deleted with their rows are found")
    func against() async throws {
        let f = try await Fixture()
        defer { f.close() }
        try await f.append("s4", 3)
        let exported = try #require(try await f.audit.checkpoint())
        let roundTrip = try JSONDecoder().decode(AuditCheckpoint.self, from: try exported.exportJSON)
        #expect(roundTrip == exported)
        #expect(try await f.verify(against: roundTrip) == nil)
        // Checkpoint 2 and the trail it covered, gone together: verifies without the export…
        _ = try await f.tamper("""
            DELETE FROM audit_checkpoints WHERE number = 2; DELETE FROM audit_events WHERE session_id IN ('s4') OR (session_id = 's1' AND seq > 5);
            """)
        try await f.rehash("s1")
        #expect(try await f.verify() == nil, "without the export nothing is left to notice")
        // …but not against it.
        let problem = try await f.verify(against: roundTrip)
        #expect(problem?.checkpoint == 2)
        #expect(problem?.reason.contains("holds checkpoints up to 1 only") == true, "\(String(describing: problem))")
    }

    @Test("a database written with the global chain (fixture) verifies after the upgrade, and after new rows and checkpoints")
    func upgradedFromGlobalChain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("v1.db")
        try FileManager.default.copyItem(atPath: BuiltProducts.packageRoot + "/Tests/Fixtures/audit-v1-global-chain.db", toPath: path)
        let database = try PhotosDatabase.open(path: path)
        defer { database.close() }
        let audit = AuditService(database: database, signingKeyPath: directory.file("key"))
        let before = try await audit.verify(publicKey: nil)
        #expect(before.isIntact, "\(String(describing: before.problem))")
        #expect(before.rowsChecked == 82)
        try await database.write { connection in
            for trail in ["operator", "fresh"] {
                let writer = try await AuditTrailWriter(sessionID: trail, on: connection)
                writer.record(AuditEntry(actor: .system, step: .photoAdded, detail: ["count": 1]))
                _ = try await writer.write(at: ISO8601Timestamp.now())
            }
        }
        try await audit.checkpoint()
        let key = try audit.trustedKey(explicit: nil)
        let after = try await audit.verify(publicKey: key)
        #expect(after.isIntact, "\(String(describing: after.problem))")
        #expect(after.rowsChecked == 84)
        // The old rows still answer to the old rule: altering one breaks the global chain there.
        try await database.write { connection in
            try await connection.executeScript("DROP TRIGGER audit_events_no_update; UPDATE audit_events SET detail = '{}' WHERE id = 10;")
        }
        let tampered = try await audit.verify(publicKey: key).problem
        #expect(tampered?.rowID == 10)
        #expect(tampered?.reason.contains("altered") == true)
    }

    @Test("64 sessions appending at once while checkpoints are written: each checkpoint covers what was acknowledged before it")
    func concurrentCheckpoints() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let audit = AuditService(database: test.database, signingKeyPath: test.directory.file("key"))
        // (trail, acknowledged seq, number of a checkpoint requested after the acknowledgement)
        let observations = try await withThrowingTaskGroup(of: [(String, Int, Int)].self) { group in
            for client in 0..<64 {
                group.addTask {
                    var seen: [(String, Int, Int)] = []
                    let trail = "session-\(client)"
                    for _ in 0..<10 {
                        let seq = try await test.database.write { connection in
                            let writer = try await AuditTrailWriter(sessionID: trail, on: connection)
                            let seq = writer.record(AuditEntry(actor: .client, step: .action, detail: ["action": "back"]))
                            _ = try await writer.write(at: ISO8601Timestamp.now())
                            return seq
                        }
                        if client % 8 == 0, let checkpoint = try await audit.checkpoint(always: true) {
                            seen.append((trail, seq, checkpoint.number))
                        }
                    }
                    return seen
                }
            }
            var all: [(String, Int, Int)] = []
            for try await seen in group { all += seen }
            return all
        }
        let result = try await audit.verify(publicKey: try audit.trustedKey(explicit: nil))
        #expect(result.isIntact, "\(String(describing: result.problem))")
        #expect(result.rowsChecked == 640)
        // What each checkpoint covers, cumulatively.
        let checkpoints = try await test.database.read { connection in
            try await connection.query("SELECT \(raw: AuditCheckpoints.columns) FROM audit_checkpoints ORDER BY number").map(AuditCheckpoints.checkpoint)
        }
        #expect(observations.count == 80)
        for (trail, seq, number) in observations {
            let covered = checkpoints.prefix(number).flatMap(\.heads).filter { $0.trail == trail }.map(\.seq).max() ?? 0
            #expect(covered >= seq, "checkpoint \(number) covers \(trail) to \(covered), but seq \(seq) was acknowledged before it")
        }
    }
}
