import CSQLite
import DatabaseAccess
import Foundation
import PhotosTestSupport
import SQLiteStore
import Testing

@Suite("Connection")
struct ConnectionTests {
    func withDatabase(_ body: (Connection, TemporaryDirectory) throws -> Void) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = try Connection(path: directory.file("test.db"))
        defer { connection.close() }
        try connection.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, amount INTEGER, data BLOB, ratio REAL)")
        try body(connection, directory)
    }

    @Test("a NULL or a value of another type read as a non-optional value throws, naming the column")
    func nullIntoNonOptional() throws {
        try withDatabase { connection, _ in
            try connection.execute("INSERT INTO items (name, amount, ratio) VALUES ('a', NULL, 2.5)")
            let row = try #require(try connection.queryOne("SELECT name, amount, ratio, 7 AS seven FROM items"))
            #expect(row.columns == ["name", "amount", "ratio", "seven"])
            #expect(try row.string("name") == "a")
            #expect(try row.optionalInt("amount") == nil)
            #expect(throws: RowValueError.self) { try row.int("amount") }
            #expect(throws: RowValueError.self) { try row.int64("ratio") }
            #expect(throws: RowValueError.self) { try row.string("seven") }
            do {
                _ = try row.string("amount")
                Issue.record("NULL read as text")
            } catch let error as RowValueError {
                #expect(error.description == "column amount holds NULL where text was expected")
            }
            let whole = Row(columns: ["total"], values: [.real(42)])
            #expect(try whole.int("total") == 42, "a whole number as a real (PostgreSQL's numeric) reads as an integer")
        }
    }

    @Test("a column the statement does not return is an error naming it, never a value from another column")
    func missingColumn() throws {
        try withDatabase { connection, _ in
            try connection.execute("INSERT INTO items (name, amount) VALUES ('a', 3)")
            let row = try #require(try connection.queryOne("SELECT name, amount FROM items"))
            do {
                _ = try row.optionalInt("price")
                Issue.record("a missing column read as nil")
            } catch let error as RowValueError {
                #expect(error.description == "the result has no column price")
            }
            #expect(try row.int("amount") == 3)
        }
    }

    @Test("a read-write connection zeroes what it frees (secure_delete), and a new file gives freed pages back (incremental auto-vacuum)")
    func freedContent() throws {
        try withDatabase { connection, directory in
            #expect(try connection.queryOne("PRAGMA secure_delete")?.int(0) == 1)
            #expect(try connection.queryOne("PRAGMA auto_vacuum")?.int(0) == 2, "2 = incremental")
            let secret = "zq7secret-bytes"
            try connection.transaction {
                for index in 0..<2_000 {
                    try connection.execute("INSERT INTO items (name, data) VALUES (\("\(secret)-\(index)"), zeroblob(500))")
                }
            }
            let grown = try #require(try connection.queryOne("PRAGMA page_count")?.int(0))
            try connection.execute("DELETE FROM items")
            _ = try connection.query("PRAGMA incremental_vacuum")
            _ = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try connection.queryOne("PRAGMA page_count")?.int(0) ?? grown < grown / 10, "the freed pages went back")
            let bytes = FileManager.default.contents(atPath: directory.file("test.db")) ?? Data()
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "deleted text is still in the file")
        }
        // A file made before (no auto-vacuum) keeps its setting: only a VACUUM could change it.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let old = try Connection(path: directory.file("old.db"), mode: .readWrite)
        try old.execute("PRAGMA auto_vacuum = NONE")
        try old.execute("VACUUM")
        old.close()
        let reopened = try Connection(path: directory.file("old.db"), mode: .readWrite)
        defer { reopened.close() }
        #expect(try reopened.queryOne("PRAGMA auto_vacuum")?.int(0) == 0)
    }

    @Test("values round-trip through binding and reading")
    func roundTrip() throws {
        try withDatabase { connection, _ in
            try connection.execute("INSERT INTO items (name, amount, data, ratio) VALUES (\("a'; DROP TABLE items; --"), \(Int64.max), \([UInt8]([0, 1, 255])), \(0.5))")
            try connection.execute("INSERT INTO items (name, amount, data, ratio) VALUES (\("b"), \(Int?.none), \([UInt8]()), \(Double?.none))")
            let rows = try connection.query("SELECT name, amount, data, ratio FROM items ORDER BY id")
            #expect(rows.count == 2)
            #expect(try rows[0].string(0) == "a'; DROP TABLE items; --")
            #expect(try rows[0].int64(1) == Int64.max)
            #expect(try rows[0].blob(2) == [0, 1, 255])
            #expect(rows[0][3] == .real(0.5))
            #expect(rows[1].optionalInt(1) == nil)
            #expect(rows[1][3] == .null)
        }
    }

    @Test("a committed transaction is kept, a rolled back one is not")
    func commitAndRollback() throws {
        try withDatabase { connection, _ in
            try connection.transaction { try connection.execute("INSERT INTO items (name) VALUES ('kept')") }
            struct Boom: Error {}
            #expect(throws: Boom.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO items (name) VALUES ('dropped')")
                    throw Boom()
                }
            }
            #expect(try connection.query("SELECT name FROM items").map { try $0.string(0) } == ["kept"])
            #expect(connection.isAutocommit)
        }
    }

    @Test("a failing statement inside a transaction leaves nothing behind")
    func failingStatementRollsBack() throws {
        try withDatabase { connection, _ in
            try connection.execute("INSERT INTO items (name) VALUES ('existing')")
            #expect(throws: SQLiteError.self) {
                try connection.transaction {
                    try connection.execute("INSERT INTO items (name) VALUES ('first')")
                    try connection.execute("INSERT INTO items (name) VALUES ('existing')")  // UNIQUE violation
                }
            }
            #expect(try connection.query("SELECT name FROM items ORDER BY id").map { try $0.string(0) } == ["existing"])
        }
    }

    @Test("errors carry the result code, message and SQL, never the bound values")
    func errorContents() throws {
        try withDatabase { connection, _ in
            try connection.execute("INSERT INTO items (name) VALUES (\("hunter2-secret"))")
            do {
                try connection.execute("INSERT INTO items (name) VALUES (\("hunter2-secret"))")
                Issue.record("expected a UNIQUE violation")
            } catch let error as SQLiteError {
                #expect(error.isUniqueViolation)
                #expect(error.primaryResultCode == SQLITE_CONSTRAINT)
                #expect(error.sql == "INSERT INTO items (name) VALUES (?)")
                #expect(error.message.contains("UNIQUE"))
                #expect(!error.description.contains("hunter2"))
            }
        }
    }

    @Test("a savepoint that throws undoes only its own writes")
    func savepoints() throws {
        try withDatabase { connection, _ in
            try connection.transaction {
                try connection.execute("INSERT INTO items (name) VALUES ('outer')")
                _ = try? connection.savepoint("inner") {
                    try connection.execute("INSERT INTO items (name) VALUES ('inner')")
                    try connection.execute("INSERT INTO items (name) VALUES ('outer')")
                }
            }
            #expect(try connection.query("SELECT name FROM items").map { try $0.string(0) } == ["outer"])
        }
    }

    @Test("statements reused from the cache give the same results")
    func statementCache() throws {
        try withDatabase { connection, _ in
            for index in 0..<50 { try connection.execute("INSERT INTO items (name, amount) VALUES (\("n\(index)"), \(index))") }
            func sql(_ least: Int) -> SQL { "SELECT count(*), sum(amount) FROM items WHERE amount >= \(least)" }
            let first = try connection.query(sql(10))
            let statement = try connection.cachedStatement(sql(10).text)
            for _ in 0..<5 {
                #expect(try connection.query(sql(10)).map(\.values) == first.map(\.values))
                #expect(try connection.cachedStatement(sql(10).text) === statement)
            }
            #expect(try connection.queryOne(sql(40))?.int(0) == 10)
            #expect(try connection.queryOne(sql(10))?.int(0) == 40)
        }
    }

    @Test("text binds with its length: empty is text not NULL, NUL bytes and non-ASCII survive")
    func textBinding() throws {
        try withDatabase { connection, _ in
            for name in ["", "a\u{0}b", "café ☕︎", String(repeating: "x", count: 100_000)] {
                try connection.execute("INSERT INTO items (name) VALUES (\(name))")
                let row = try connection.queryOne("SELECT typeof(name), length(CAST(name AS BLOB)), name FROM items WHERE id = last_insert_rowid()")
                #expect(try row?.string(0) == "text")
                #expect(try row?.int(1) == name.utf8.count)
                #expect(try row?.string(2) == name)
            }
        }
    }

    @Test("one-at-a-time text binding (bulk loads) keeps NUL bytes too")
    func bindTextOneByOne() throws {
        try withDatabase { connection, _ in
            let insert = try connection.prepare("INSERT INTO items (name) VALUES (?)")
            for name in ["a\u{0}b", "", "\u{0}", "tail\u{0}"] {
                try insert.bindText(name, at: 1)
                try insert.run()
                let row = try connection.queryOne("SELECT length(CAST(name AS BLOB)), name FROM items WHERE id = last_insert_rowid()")
                #expect(try row?.int(0) == name.utf8.count, "\(name.debugDescription)")
                #expect(try row?.string(1) == name)
            }
        }
    }

    @Test("BEGIN waits for another connection's write lock at most about one busy timeout")
    func beginIsBounded() throws {
        try withDatabase { connection, directory in
            let path = directory.file("test.db")
            let holder = try Connection(path: path)
            defer { holder.close() }
            try holder.begin(.immediate)
            defer { _ = try? holder.rollbackIfOpen() }
            let waiting = try Connection(path: path, options: .init(busyTimeoutMilliseconds: 300))
            defer { waiting.close() }
            let start = ContinuousClock.now
            #expect(throws: SQLiteError.self) { try waiting.begin(.immediate) }
            let waited = ContinuousClock.now - start
            // Before: the busy timeout, then five more attempts with it (~1.9 s here).
            #expect(waited >= .milliseconds(250) && waited < .milliseconds(900), "waited \(waited)")
            _ = connection
        }
    }

    @Test("statements whose SQL hashes alike in the cache still get their own statement")
    func cacheKeyCollision() throws {
        try withDatabase { connection, _ in
            // Same length, same first and last bytes, differing only where the cache key's
            // hash does not look: each must still run its own SQL.
            for _ in 0..<3 {
                let one = try connection.queryOne("SELECT 1 AS a")?.int(0)
                let two = try connection.queryOne("SELECT 2 AS a")?.int(0)
                #expect(one == 1 && two == 2)
            }
        }
    }

    @Test("a wrong number of arguments is an error, not a crash")
    func argumentCount() throws {
        try withDatabase { connection, _ in
            #expect(throws: SQLiteError.self) { try connection.execute("INSERT INTO items (name) VALUES (?)") }
            #expect(throws: SQLiteError.self) { try connection.query("SELEC nonsense") }
        }
    }

    @Test("two connections contending for the write lock wait and both succeed")
    func writeLockContention() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("contended.db")
        let setup = try Connection(path: path)
        try setup.execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)")
        try setup.execute("INSERT INTO counter VALUES (1, 0)")
        setup.close()

        let iterations = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try await Task.detached {
                        let connection = try Connection(path: path, options: .init(busyTimeoutMilliseconds: 10_000))
                        defer { connection.close() }
                        for _ in 0..<iterations {
                            try connection.transaction(.immediate) {
                                let value = try connection.queryOne("SELECT value FROM counter WHERE id = 1")?.int(0) ?? -1
                                try connection.execute("UPDATE counter SET value = \(value + 1) WHERE id = 1")
                            }
                        }
                    }.value
                }
            }
            try await group.waitForAll()
        }
        let check = try Connection(path: path)
        defer { check.close() }
        await #expect(try check.queryOne("SELECT value FROM counter")?.int(0) == 2 * iterations)
    }

    @Test("new database files are private (mode 0600)")
    func filePermissions() throws {
        try withDatabase { connection, directory in
            try connection.execute("INSERT INTO items (name) VALUES ('x')")
            for suffix in ["", "-wal", "-shm"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: directory.file("test.db" + suffix))
                #expect((attributes[.posixPermissions] as? Int) == 0o600, "test.db\(suffix)")
            }
        }
    }
}
