import DatabaseAccess
import Foundation
import PhotosModel
import PhotosTestSupport
@testable import PostgresStore
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
        let test = try await TestDatabase.make(.postgres)
        defer { test.close() }
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
    /// token (so that every part of both plans runs), each statement prepared from its own text
    /// and run with the values its own bindings give.
    static func plans(_ database: any DatabaseStore) async throws -> [String: String] {
        let now = "2026-06-01T00:00:00.000Z"
        let read = ActionRead(
            sessionID: "plan-7", facts: FactsWanted(photoIDs: [3], userIDs: [5]), namedByRow: true, answerKey: "key",
            answersSince: now)
        let row = SessionRow(
            id: "plan-7", version: 2, state: "{}", userID: 7, createdAt: now, updatedAt: now, trailSeq: 2, trailHash: "h", layout: "stack",
            topScreen: "photo", tokenID: 9, photoIDs: [3])
        let assumptions = ActionWrite.Assumptions(
            tokenUnrevoked: 9, notBought: .init(userID: 7, photoIDs: [3, 4]), purchaseCount: .init(userID: 7, count: 4))
        let write = ActionWrite(
            row: row, kind: .update(expectedVersion: 1, expectedTrailSeq: 0), audit: [], at: now,
            purchases: [PurchaseRecord(userID: 7, photoID: 3, priceCents: 100)], revokedTokenIDs: [9], answersSince: now, assumptions: assumptions)
        let navigation = ActionWrite(
            row: row, kind: .update(expectedVersion: 1, expectedTrailSeq: 0), audit: [], at: now, assumptions: assumptions)
        let statements = [
            ("read", ActionReadStatement.sql, ActionReadStatement.bound.values(read)),
            ("write", ActionWriteStatement.sql, ActionWriteStatement.bound.values(SessionStatements.WriteInput(write))),
            ("navigation write", NavigationWriteStatement.sql, NavigationWriteStatement.bound.values(SessionStatements.WriteInput(navigation))),
            ("navigation batch", NavigationBatchStatement.sql, NavigationBatchStatement.bound.values(Self.batchJSON(navigation))),
        ]
        return try await database.write { connection -> [String: String] in
            try await connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            var plans: [String: String] = [:]
            for (index, (name, sql, values)) in statements.enumerated() {
                let plan = "plan_\(index)"
                try await connection.execute("PREPARE \(raw: plan) AS \(raw: sql)")
                let rows = try await connection.query("EXPLAIN EXECUTE \(raw: plan)(\(raw: values.map(Self.literal).joined(separator: ", ")))")
                try await connection.execute("DEALLOCATE \(raw: plan)")
                plans[name] = try rows.map { try $0.string(0) }.joined(separator: "\n")
            }
            return plans
        }
    }

    /// The batch statement's JSON for `write` and a second session's like it.
    static func batchJSON(_ write: ActionWrite) -> String {
        var other = write
        other.row.id = "plan-8"
        var builder = JSONBuilder()
        builder.beginArray()
        for each in [write, other] { NavigationBatchStatement.element(SessionStatements.WriteInput(each), into: &builder) }
        builder.endArray()
        return builder.text
    }

    /// `value` as an SQL literal (test values only: no quote in them goes unescaped).
    static func literal(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .text(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob: "NULL"
        }
    }
}
