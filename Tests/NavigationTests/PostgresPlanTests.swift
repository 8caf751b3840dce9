import DatabaseAccess
import Foundation
import Navigation
import PhotosTestSupport
@testable import Sessions
import Testing

/// photosd prepares an action's two statements once per connection, and after a few runs
/// PostgreSQL keeps one generic plan for them, chosen without the arguments' values. A generic
/// plan that scans a table that grows with use (purchases, tokens, sessions, idempotency
/// answers) makes every action slower as the shop grows: the read once scanned all purchases
/// (0.2 ms for an action on a new database, 0.7 ms with 2,000 purchases). These plans are
/// checked on tables of a shop that has run a while.
@Suite("PostgreSQL plans of an action's statements", .enabled(if: PostgresTestDatabase.available))
struct PostgresPlanTests {
    /// The growing tables grown by `users` users (ids after `from`), each owning 10 purchases and
    /// 10 tokens, with as many photos, and 10 sessions and idempotency answers per user.
    static func grow(from: Int, users: Int) -> String {
        let range = "generate_series(\(from + 1), \(from + users))"
        return """
            INSERT INTO users (username, password_hash, created_at)
                SELECT 'plan-' || g, 'x', '2026-01-01T00:00:00.000Z' FROM \(range) g;
            INSERT INTO photos (title, url, price_cents, created_at)
                SELECT 'plan ' || g, 'https://example.com/' || g, 100, '2026-01-01T00:00:00.000Z' FROM \(range) g;
            INSERT INTO purchases (user_id, photo_id, price_cents, purchased_at, session_id)
                SELECT u.id, p.id, 100, '2026-01-01T00:00:00.000Z', NULL
                FROM users u CROSS JOIN LATERAL (SELECT id FROM photos ORDER BY id OFFSET u.id % 50 LIMIT 10) p
                WHERE u.username LIKE 'plan-%' AND substr(u.username, 6)::int > \(from);
            INSERT INTO tokens (token_hash, user_id, issued_at, expires_at)
                SELECT md5(g::text) || md5(u.id::text), u.id, '2026-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z'
                FROM users u, generate_series(1, 10) g WHERE u.username LIKE 'plan-%' AND substr(u.username, 6)::int > \(from);
            INSERT INTO sessions (id, version, state, user_id, created_at, updated_at, trail_seq, trail_hash, layout, top_screen, token_id, photo_ids)
                SELECT 'plan-' || g, 1, '{}', NULL, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 0, 'x', 'stack', 'photos', NULL, '{}'
                FROM generate_series(\(from * 10 + 1), \((from + users) * 10)) g;
            INSERT INTO idempotency_keys (session_id, key, request_hash, response, created_at)
                SELECT 'plan-' || g, 'k', 'x', '{}', '2026-01-01T00:00:00.000Z' FROM generate_series(\(from * 10 + 1), \((from + users) * 10)) g;
            ANALYZE;
            """
    }

    @Test("an action's read and write find rows by index in tables that grow (generic plans: no sequential scan)")
    func actionStatementsUseIndexes() async throws {
        let h = try await SessionHarness.make(.postgres)
        defer { h.close() }
        let test = try h.test
        // A shop that has run a little (2,000 purchases: the read once scanned them all), then a while.
        for (from, users) in [(0, 200), (200, 1800)] {
            try await test.database.write { try await $0.executeScript(Self.grow(from: from, users: users)) }
            for (name, plan) in try await Self.plans(test.database) {
                #expect(!plan.isEmpty)
                // A catalogue of 200 photos fits in a few pages, where a scan is the cheaper plan.
                let grown = from == 0 ? ["purchases", "tokens", "sessions", "idempotency_keys"] : ["purchases", "tokens", "sessions", "idempotency_keys", "photos", "users"]
                for table in grown {
                    #expect(!plan.contains("Seq Scan on \(table)"), "with \(from + users) users, the \(name) scans \(table):\n\(plan)")
                }
            }
        }
    }

    /// The generic plans of the read and the writes, for a signed-in session on photo 3 with a
    /// token (so that every part of both plans runs).
    static func plans(_ database: any DatabaseStore) async throws -> [String: String] {
        try await database.write { connection -> [String: String] in
            try await connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            try await connection.execute("PREPARE plan_read AS " + ActionStatements.Read.sql)
            try await connection.execute("PREPARE plan_write AS " + ActionStatements.Write.sql)
            try await connection.execute("PREPARE plan_navigation AS " + ActionStatements.NavigationWrite.sql)
            let now = "'2026-06-01T00:00:00.000Z'"
            let read = try await connection.query(
                "EXPLAIN EXECUTE plan_read(-1, 'plan-7', '{3}', '{5}', 0, \(now), 'plan-7', 'key', \(now))")
            let write = try await connection.query(
                """
                EXPLAIN EXECUTE plan_write(1, 2, '{}', 7, \(now), 2, 'h', 'stack', 'photo', 9, '{3}', 'plan-7', 1, 0,
                    '[]', \(now), 'plan-7', '[[7,3,100]]', '[]', \(now), '{9}', 'plan-7', '[]', \(now),
                    9, 9, \(now), 1, 7, '{3,4}', 7, 7, 4, 1, 0)
                """)
            let navigation = try await connection.query(
                """
                EXPLAIN EXECUTE plan_navigation(1, 2, '{}', 7, \(now), 2, 'h', 'stack', 'photo', 9, '{3}', 'plan-7', 1, 0,
                    '[]', 9, 9, \(now), 1, 7, '{3,4}', 7, 7, 4)
                """)
            try await connection.execute("DEALLOCATE plan_read")
            try await connection.execute("DEALLOCATE plan_write")
            try await connection.execute("DEALLOCATE plan_navigation")
            func text(_ rows: [Row]) throws -> String { try rows.map { try $0.string(0) }.joined(separator: "\n") }
            return ["read": try text(read), "write": try text(write), "navigation write": try text(navigation)]
        }
    }
}
