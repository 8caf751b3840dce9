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
    /// Statements the server ran for this database so far (BEGIN and COMMIT count: each is a
    /// round trip of its own), less the counting query itself.
    static func statements(_ test: TestDatabase) async throws -> Int {
        try await test.database.write { connection in
            try connection.queryOne(
                "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )?.int(0) ?? 0
        }
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
        // Measured: the counting query's own BEGIN, SELECT and COMMIT are 3; each action adds its own.
        var counts: [String: Int] = [:]
        let actions: [(String, ClientAction, String?)] = [
            ("selectPhoto", ClientAction(.selectPhoto, photoId: 2), nil),
            ("buy (to sign-in)", ClientAction(.buy), nil),
            ("cancel", ClientAction(.cancel), "key-1"),
            ("back", ClientAction(.back), "key-2"),
            ("retried back", ClientAction(.back), "key-2"),
        ]
        for (label, action, key) in actions {
            let before = try await Self.statements(test)
            let result = try await sessions.apply(action, to: id, expectVersion: nil, idempotencyKey: key, actor: .client)
            #expect(result.error == nil, "\(label): \(String(describing: result.error))")
            let after = try await Self.statements(test)
            counts[label] = after - before - 3
        }
        for (label, count) in counts {
            #expect(count <= 2, "\(label): \(count) round trips")
            #expect(count >= 1, "\(label): nothing counted — is pg_stat_statements loaded?")
        }
        #expect(counts["retried back"] == 1, "a retry is answered by the read alone: \(counts)")
    }
}
