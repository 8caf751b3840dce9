@testable import AuditTrail
import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import SQLiteStore
import Testing

@Suite("AuditChains")
struct AuditLogTests {
    /// A database with a few audited steps in two sessions.
    func populated() async throws -> TestDatabase {
        let test = try TestDatabase()
        try await test.database.write { connection in
            for index in 0..<3 {
                let at = ISO8601Timestamp.now()
                try await AuditChains.append(
                    [AuditEntry(actor: .client, coordinator: "app", step: .screenPush, screen: "photo", detail: ["photoId": .int(Int64(index))])],
                    to: "s1", at: at, on: connection)
                try await AuditChains.append([AuditEntry(actor: .client, coordinator: "app", step: .action, detail: ["action": "back"])], to: "s2", at: at, on: connection)
            }
        }
        return test
    }

    @Test("one append of more rows than one INSERT takes (several statements, one chain) verifies", arguments: TestStore.all)
    func longAppend(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let entries = (0..<1_234).map { AuditEntry(actor: .client, coordinator: "app", step: .screenPush, screen: "photo", detail: ["photoId": .int(Int64($0))]) }
        _ = try await test.database.write { connection in
            try await AuditChains.append(entries, to: "long", at: ISO8601Timestamp.now(), on: connection)
        }
        let rows = try await test.database.read { try await AuditChains.rows(sessionID: "long", limit: 10_000, on: $0) }
        #expect(rows.map(\.seq) == Array(1...1_234))
        #expect(try await test.database.read { try await AuditChains.verify(on: $0) }.isIntact)
    }

    @Test("seq is contiguous per session and the chain verifies")
    func appendAndVerify() async throws {
        let test = try await populated()
        defer { test.close() }
        let rows = try await test.database.read { try await AuditChains.rows(sessionID: "s1", on: $0) }
        #expect(rows.map(\.seq) == [1, 2, 3])
        #expect(rows[1].detail == #"{"photoId":1}"#)
        #expect(rows[0].at.hasSuffix("Z") && rows[0].at.count == 24)
        let result = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(result.isIntact)
        #expect(result.rowsChecked == 6)
    }

    @Test("rows of two trails recorded together read back as returned, numbered per trail", arguments: [1, 2, 8, 9, 17])
    func appendMany(count: Int) async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let returned = try await test.database.write { connection in
            let a = try await AuditTrailWriter(sessionID: "a", on: connection)
            let b = try await AuditTrailWriter(sessionID: "b", on: connection)
            for index in 0..<count {
                let entry = AuditEntry(actor: .client, coordinator: "app", step: .screenPush, screen: "photo",
                                       detail: ["photoId": .int(Int64(index)), "note": .string("row \(index) \"quoted\"")])
                let trail = index % 3 == 0 ? a : b
                let expected = trail.nextSeq
                #expect(trail.record(entry) == expected)
            }
            let at = ISO8601Timestamp.now()
            return try await a.write(at: at) + b.write(at: at)
        }
        let stored = try await test.database.read { try await AuditChains.rows(on: $0) }
        #expect(returned == stored)
        #expect(stored.map(\.detail).first == #"{"note":"row 0 \"quoted\"","photoId":0}"#)
        let inA = (count + 2) / 3  // indices 0, 3, 6, …
        #expect(stored.filter { $0.sessionId == "a" }.map(\.seq) == (0..<inA).map { $0 + 1 })
        #expect(stored.filter { $0.sessionId == "b" }.map(\.seq) == (0..<(count - inA)).map { $0 + 1 })
        let result = try await test.database.read { try await AuditChains.verify(on: $0) }
        #expect(result.isIntact)
        #expect(result.rowsChecked == count)
    }

    @Test("the table refuses UPDATE and DELETE")
    func appendOnly() async throws {
        let test = try await populated()
        defer { test.close() }
        await #expect(throws: SQLiteError.self) { try await test.database.write { try await $0.execute("UPDATE audit_events SET detail = '{}'") } }
        await #expect(throws: SQLiteError.self) { try await test.database.write { try await $0.execute("DELETE FROM audit_events") } }
    }

    /// Drops the triggers, tampers, and returns what verify finds.
    func tamper(_ sql: String) async throws -> AuditChains.Problem? {
        let test = try await populated()
        defer { test.close() }
        try await test.database.write { connection in
            try await connection.executeScript("DROP TRIGGER audit_events_no_update; DROP TRIGGER audit_events_no_delete; " + sql)
        }
        return try await test.database.read { try await AuditChains.verify(on: $0) }.problem
    }

    @Test("verify names the first altered row")
    func alteredRow() async throws {
        let problem = try await tamper("UPDATE audit_events SET detail = '{\"photoId\":9}' WHERE id = 3")
        #expect(problem?.rowID == 3)
        #expect(problem?.reason.contains("altered") == true)
    }

    @Test("verify names the trail's row after a deleted one")
    func deletedRow() async throws {
        // Rows alternate between s1 (ids 1, 3, 5) and s2 (ids 2, 4, 6): each trail is its own chain.
        let problem = try await tamper("DELETE FROM audit_events WHERE id = 2")
        #expect(problem?.rowID == 4)
        #expect(problem?.reason.contains("deleted or inserted") == true)
    }

    @Test("verify names a row inserted behind the triggers' back")
    func insertedRow() async throws {
        let problem = try await tamper("""
            INSERT INTO audit_events (id, session_id, seq, at, actor, step, detail, prev_hash, hash)
            SELECT 100, 's1', 4, at, 'client', 'purchase.completed', '{}', hash, 'forged' FROM audit_events WHERE id = 6;
            """)
        #expect(problem?.rowID == 100)
    }
}
