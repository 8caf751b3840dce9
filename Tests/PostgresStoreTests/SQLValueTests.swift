import DatabaseAccess
import PhotosTestSupport
import Testing

/// `SQL`: one statement for both stores, each value bound where it appears.
@Suite("SQL values")
struct SQLValueTests {
    @Test("values, lists, fragments and raw text render as each store takes them, the values in placeholder order")
    func rendering() {
        let fragment: SQL = " AND kind = \("photo")"
        let ids: [Int64] = [3, 5, 8]
        let sql: SQL = "SELECT \(raw: "id, title") FROM \(raw: "photos") WHERE owner = \(7)\(fragment) AND id IN (\(list: ids)) LIMIT \(10)"
        #expect(sql.text == "SELECT id, title FROM photos WHERE owner = ? AND kind = ? AND id IN (?, ?, ?) LIMIT ?")
        #expect(sql.numberedText == "SELECT id, title FROM photos WHERE owner = $1 AND kind = $2 AND id IN ($3, $4, $5) LIMIT $6")
        #expect(sql.arguments.map(\.databaseValue) == [.integer(7), .text("photo"), .integer(3), .integer(5), .integer(8), .integer(10)])
        let joined = SQL.joined([" a = \(1)", "b = \(2)"]) + " WHERE c = \(3)"
        #expect(joined.text == " a = ?, b = ? WHERE c = ?" && joined.numberedText == " a = $1, b = $2 WHERE c = $3")
        #expect(joined.arguments.count == 3)
        let empty: [Int64] = []
        let none: SQL = "IN (\(list: empty))"
        #expect(none.text == "IN ()" && none.arguments.isEmpty)
        let prepared: SQL = "INSERT INTO t (a, b) VALUES (\(unbound: 2))"
        #expect(prepared.numberedText == "INSERT INTO t (a, b) VALUES ($1, $2)" && prepared.arguments.isEmpty)
        #expect(String(describing: sql) == sql.text, "the description shows no value")
    }

    @Test("a string interpolated is bound, never spliced; nil binds NULL; both stores give the values back", arguments: TestStore.all)
    func bindsEverywhere(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let hostile = "x'); DROP TABLE photos; --"
        let missing: String? = nil
        let row = try await test.database.read { connection in
            try await connection.queryOne("SELECT \(hostile) AS text, \(missing) AS absent, \(Int64(41)) + 1 AS answer")
        }
        #expect(try row?.string("text") == hostile)
        #expect(try row?.optionalString("absent") == nil)
        #expect(try row?.int("answer") == 42)
        #expect(try await test.database.read { try await $0.tableExists("photos") })
    }

    @Test("insert(into:) writes every row, in statements of at most perStatement rows", arguments: TestStore.all)
    func batchedInsert(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        let rows: [[any DatabaseBindable]] = (1...1_001).map { [Int64($0), "n\($0)"] }
        let stored = try await test.database.write { connection in
            try await connection.executeScript("CREATE TABLE batch_rows (id BIGINT PRIMARY KEY, name TEXT NOT NULL)")
            try await connection.insert(into: "batch_rows", columns: "id, name", rows: rows, perStatement: 300)
            try await connection.insert(into: "batch_rows", columns: "id, name", rows: [[any DatabaseBindable]](), perStatement: 300)
            return try await connection.query("SELECT id, name FROM batch_rows ORDER BY id").map { (try $0.int64("id"), try $0.string("name")) }
        }
        #expect(stored.count == 1_001)
        #expect(stored.first! == (1, "n1") && stored.last! == (1_001, "n1001"))
    }
}
