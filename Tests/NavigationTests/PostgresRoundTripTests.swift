import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import SQLiteStore
import Testing

/// On PostgreSQL an action is one read and one write: two statements, two round trips (counted
/// by the server itself, `pg_stat_statements`, which `scripts/postgres-test-server` loads).
@Suite("PostgreSQL round trips", .enabled(if: PostgresTestDatabase.available))
struct PostgresRoundTripTests {
    /// Forgets the statements counted for this database so far (the reset itself then counts 1).
    enum Reset: NamedStatement {
        static let name = "test_reset_statement_counts"
        static let sql = "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)"
    }

    /// Statements the server ran for this database since the reset (this one is counted only
    /// once it ends).
    enum Count: NamedStatement {
        static let name = "test_count_statements"
        static let sql = "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
    }

    @Test("an action that checks no password is at most 2 round trips: one read, one write")
    func actionIsTwoRoundTrips() async throws {
        let h = try await SessionHarness.make(.postgres)
        defer { h.close() }
        let test = try h.test
        try await test.database.write { try $0.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        let sessions = try h.sessions
        let id = try await sessions.createSession(layout: .stack, link: nil, actor: .client).session.id
        // Warm up: each pooled connection prepares the two statements once (a parse each).
        for _ in 0..<3 {
            _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
            _ = try await sessions.apply(ClientAction(.back), to: id)
        }
        // Each action between a reset of the counts and a count (both single statements).
        var counts: [String: Int] = [:]
        let actions: [(String, ClientAction, String?)] = [
            ("selectPhoto", ClientAction(.selectPhoto, photoId: 2), nil),
            ("buy (to sign-in)", ClientAction(.buy), nil),
            ("cancel", ClientAction(.cancel), "key-1"),
            ("back", ClientAction(.back), "key-2"),
            ("retried back", ClientAction(.back), "key-2"),
        ]
        let store = try #require(test.database as? any SingleStatementStore)
        for (label, action, key) in actions {
            _ = try await store.run(Reset.self, arguments: [])
            let result = try await sessions.apply(action, to: id, expectVersion: nil, idempotencyKey: key, actor: .client)
            #expect(result.error == nil, "\(label): \(String(describing: result.error))")
            let counted = try await store.run(Count.self, arguments: []).first?.int(0) ?? 0
            counts[label] = counted - 1
        }
        for (label, count) in counts {
            #expect(count <= 2, "\(label): \(count) round trips")
            #expect(count >= 1, "\(label): nothing counted — is pg_stat_statements loaded?")
        }
        #expect(counts["retried back"] == 1, "a retry is answered by the read alone: \(counts)")
    }

    @Test("creating a session with nothing to read (no link, or one without a photo) is 1 round trip")
    func creationIsOneRoundTrip() async throws {
        let h = try await SessionHarness.make(.postgres)
        defer { h.close() }
        let test = try h.test
        try await test.database.write { try $0.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        let sessions = try h.sessions
        let store = try #require(test.database as? any SingleStatementStore)
        // Warm up: each pooled connection prepares the statement once.
        for _ in 0..<3 { _ = try await sessions.createSession(layout: .stack, link: nil, actor: .client) }
        for (layout, link) in [(SessionLayout.stack, nil), (.tabs, nil), (.tabs, try DeepLink(parsing: "/purchases"))] as [(SessionLayout, DeepLink?)] {
            _ = try await store.run(Reset.self, arguments: [])
            let created = try await sessions.createSession(layout: layout, link: link, actor: .client)
            let counted = try await store.run(Count.self, arguments: []).first?.int(0) ?? 0
            #expect(counted - 1 == 1, "\(layout) \(String(describing: link)): \(counted - 1) round trips")
            // What was written is what the general path writes: the session reads back, its trail verifies.
            let view = try await sessions.session(id: created.session.id)
            #expect(view.version == created.session.version)
            #expect(try await sessions.events(sessionID: created.session.id).map(\.seq) == Array(1...created.events.count))
        }
        let verification = try await test.database.read { try AuditLog.verify(on: $0, publicKey: nil) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
    }
}
