import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Testing

/// `forEachRow` hands over rows one at a time on both stores, whatever the result's size: on
/// PostgreSQL through a server-side cursor read a page at a time (the audit verifier scans whole
/// trails with it; collecting them first would hold millions of rows in memory).
@Suite("forEachRow on both stores")
struct RowStreamingTests {
    /// The numbers 1…n, in both dialects.
    static func numbers(_ count: Int) -> SQL {
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count)) SELECT i FROM n ORDER BY i"
    }

    @Test("results of 0, one page exactly, and several pages and a bit arrive whole and in order", arguments: TestStore.all)
    func wholeAndInOrder(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        for count in [0, 1, 1_000, 2_000, 2_501] {
            let seen = try await test.database.read { connection in
                var seen: [Int] = []
                // `WHERE i < ?` with 0 still yields the anchor row 1: filter it for the empty case.
                try await connection.forEachRow("SELECT i FROM (\(Self.numbers(max(count, 1)))) AS numbers WHERE i <= \(count)") { seen.append(try $0.int(0)) }
                return seen
            }
            #expect(seen == Array(stride(from: 1, through: count, by: 1)), "\(count) rows")
        }
    }

    @Test("a body that stops early leaves the transaction usable, for more scans and queries", arguments: TestStore.all)
    func stopEarly(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        struct Enough: Error {}
        let (stoppedAt, second, total) = try await test.database.read { connection in
            var stoppedAt = 0
            do {
                try await connection.forEachRow(Self.numbers(3_000)) { row in
                    stoppedAt = try row.int(0)
                    if stoppedAt == 1_500 { throw Enough() }
                }
            } catch is Enough {}
            var second = 0
            try await connection.forEachRow(Self.numbers(1_200)) { _ in second += 1 }
            let total = try await connection.queryOne("SELECT count(*) FROM (\(Self.numbers(10))) AS numbers")?.int(0)
            return (stoppedAt, second, total)
        }
        #expect(stoppedAt == 1_500)
        #expect(second == 1_200)
        #expect(total == 10)
    }

    @Test("on PostgreSQL the rows come through a cursor, closed at the end", .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
    func pagedThroughACursor() async throws {
        let test = try await TestDatabase.make(.postgres)
        defer { test.close() }
        // pg_cursors also lists the unnamed portal of the query asking; only ours are counted.
        let (during, after) = try await test.database.read { connection in
            var during: [Int] = []
            try await connection.forEachRow(Self.numbers(2_500)) { row in
                // The same connection, between two pages' rows: the cursor is open on the server.
                if try row.int(0) % 1_000 == 1 { await during.append(try connection.queryOne("SELECT count(*) FROM pg_cursors WHERE name LIKE 'photosd_rows_%'")?.int(0) ?? -1) }
            }
            return await (during, try connection.queryOne("SELECT count(*) FROM pg_cursors WHERE name LIKE 'photosd_rows_%'")?.int(0))
        }
        #expect(during == [1, 1, 1], "rows of pages 1, 2 and 3 read with the cursor open")
        #expect(after == 0, "the cursor was left open")
    }
}
