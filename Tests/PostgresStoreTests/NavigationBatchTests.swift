import DatabaseAccess
import PhotosTestSupport
@testable import PostgresStore
import Synchronization
import Testing

/// Group commit of navigation writes on PostgreSQL (`WriteBatcher`, `NavigationBatchStatement`):
/// writes that wait go together, and each keeps the outcome it would have had alone.
@Suite("PostgreSQL navigation writes sent together")
struct NavigationBatchTests {
    @Test("the batcher: at most maxLeaders batches at once, none holding two writes of one key or more than maxBatch, every result to its own write")
    func batcherKeepsWritesApart() async throws {
        let batcher = WriteBatcher<Int, Int>(maxLeaders: 2, maxBatch: 5)
        let inFlight = Mutex((keys: Set<String>(), batches: 0, peak: 0, broken: [String]()))
        let send: @Sendable ([Int]) async -> [Result<Int, any Error>] = { inputs in
            let keys = inputs.map { "k\($0 % 7)" }
            inFlight.withLock { state in
                if Set(keys).count != keys.count { state.broken.append("two writes of one key in \(inputs)") }
                if inputs.count > 5 { state.broken.append("a batch of \(inputs.count)") }
                for key in keys where !state.keys.insert(key).inserted { state.broken.append("\(key) in two batches at once") }
                state.batches += 1
                state.peak = max(state.peak, state.batches)
            }
            try? await Task.sleep(for: .milliseconds(2))
            inFlight.withLock { state in
                for key in keys { state.keys.remove(key) }
                state.batches -= 1
            }
            // Every fifth write fails alone.
            return inputs.map { $0 % 5 == 4 ? .failure(Refused(input: $0)) : .success($0 * 10) }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for input in 0..<300 {
                group.addTask {
                    do {
                        let output = try await batcher.write(input, key: "k\(input % 7)", send: send)
                        #expect(input % 5 != 4 && output == input * 10)
                    } catch let refused as Refused {
                        #expect(refused.input == input)
                    }
                }
            }
            try await group.waitForAll()
        }
        let state = inFlight.withLock { $0 }
        #expect(state.broken.isEmpty, "\(state.broken.prefix(3))")
        #expect(state.peak <= 2)
        #expect(batcher.sent.largest > 1, "300 writes at once over 2 leaders went one by one")
        #expect(batcher.sent.largest <= 5)
    }

    struct Refused: Error { let input: Int }

    /// What each session's write in `outcomesPerWrite` is made to meet.
    enum Kind: Int, CaseIterable {
        case goesThrough, versionMoved, trailMoved, tokenRevoked, photoBought, listChanged, movedAndRevoked
    }

    @Test(
        "each write of a batch has the outcome it has alone: written, moved (version or trail; before a failed assumption), stale with its reason; audit rows only with its row",
        .enabled(if: PostgresTestDatabase.available))
    func outcomesPerWrite() async throws {
        let test = try await TestDatabase.make(.postgres)
        defer { test.close() }
        let storage = try #require(test.database as? PostgresStorage)
        let at = "2026-06-01T00:00:00.000Z"
        try await storage.write { connection in
            try await connection.execute("INSERT INTO users (id, username, password_hash, created_at) VALUES (1, 'batch', 'x', \(at))")
            try await connection.execute("INSERT INTO photos (id, title, url, price_cents, created_at) VALUES (1, 'p', 'https://example.com/1', 100, \(at))")
            try await connection.execute("INSERT INTO purchases (user_id, photo_id, price_cents, purchased_at) VALUES (1, 1, 100, \(at))")
            try await connection.execute(
                "INSERT INTO tokens (id, token_hash, user_id, issued_at, expires_at, revoked_at) VALUES (1, 'h1', 1, \(at), '2099-01-01T00:00:00.000Z', \(at))")
        }
        let sessions = 48
        for round in 0..<4 {
            let ids = (0..<sessions).map { "batch-\(round)-\($0)" }
            for id in ids {
                #expect(try await storage.writeDecision(Self.write(id, version: 1, expecting: nil)) == .written)
            }
            // Every session's write at once (and a second of the sessions that go through,
            // expecting the same version: it waits for the first and finds the row moved).
            let outcomes = try await withThrowingTaskGroup(of: (String, Int, ActionWriteOutcome).self) { group in
                for (index, id) in ids.enumerated() {
                    let kind = Kind.allCases[index % Kind.allCases.count]
                    group.addTask { (id, 0, try await storage.writeDecision(Self.write(id, version: 2, expecting: kind))) }
                    if kind == .goesThrough {
                        group.addTask { (id, 1, try await storage.writeDecision(Self.write(id, version: 2, expecting: kind))) }
                    }
                }
                var outcomes: [String: [ActionWriteOutcome]] = [:]
                for try await (id, _, outcome) in group { outcomes[id, default: []].append(outcome) }
                return outcomes
            }
            for (index, id) in ids.enumerated() {
                let kind = Kind.allCases[index % Kind.allCases.count]
                let got = outcomes[id] ?? []
                switch kind {
                case .goesThrough: #expect(got.filter { $0 == .written }.count == 1 && got.filter { $0 == .moved }.count == 1, "\(id): \(got)")
                case .versionMoved, .trailMoved, .movedAndRevoked: #expect(got == [.moved], "\(id) \(kind): \(got)")
                case .tokenRevoked: #expect(got == [.stale(reason: "the session's token was revoked")], "\(id): \(got)")
                case .photoBought: #expect(got == [.stale(reason: "a photo assumed not bought was bought")], "\(id): \(got)")
                case .listChanged: #expect(got == [.stale(reason: "the purchase list changed")], "\(id): \(got)")
                }
                let row = try await storage.read { connection in
                    try await connection.queryOne(
                        """
                        SELECT version, trail_seq, trail_hash, state, user_id, updated_at, layout, top_screen, token_id, photo_ids, ended_at,
                            (SELECT count(*) FROM audit_events a WHERE a.session_id = s.id) AS rows,
                            (SELECT detail || ' ' || prev_hash || ' ' || hash FROM audit_events a WHERE a.session_id = s.id ORDER BY seq DESC LIMIT 1) AS last
                        FROM sessions s WHERE id = \(id)
                        """)
                }
                let written = kind == .goesThrough
                // Every column as the write gave it (the JSON's places reach their columns).
                let expected = Self.write(id, version: written ? 2 : 1, expecting: nil)
                #expect(try row?.string("state") == expected.row.state && row?.string("trail_hash") == expected.row.trailHash, "\(id)")
                #expect(try row?.string("updated_at") == expected.row.updatedAt && row?.int64("user_id") == 1, "\(id)")
                #expect(try row?.string("layout") == "stack" && row?.string("top_screen") == "photo" && row?.string("photo_ids") == "{1}", "\(id)")
                #expect(try row?.optionalInt64("token_id") == nil && row?.optionalString("ended_at") == nil, "\(id)")
                #expect(try row?.string("last") == #"{"photoId":1} h\#(written ? 1 : 0) h\#(written ? 2 : 1)"#, "\(id)")
                #expect(try row?.int64("version") == (written ? 2 : 1), "\(id) \(kind)")
                #expect(try row?.int64("trail_seq") == (written ? 2 : 1), "\(id) \(kind)")
                #expect(try row?.int64("rows") == (written ? 2 : 1), "\(id) \(kind): audit rows only with the row")
            }
            if storage.navigationWrites.sent.largest > 1 { break }
        }
        #expect(storage.navigationWrites.sent.largest > 1, "no batch of more than one write was sent")
        // The trail's rows of one batch are in order per session (ids follow the seqs).
        let disordered = try await storage.read { connection in
            try await connection.queryOne(
                """
                SELECT count(*) AS n FROM audit_events a JOIN audit_events b ON a.session_id = b.session_id AND a.seq < b.seq AND a.id > b.id
                """)
        }
        #expect(try disordered?.int64("n") == 0)
    }

    @Test(
        "two instances' batches over the same sessions, in opposite orders: no deadlock, no batch refused, each session written once",
        .enabled(if: PostgresTestDatabase.available))
    func twoInstancesOverTheSameSessions() async throws {
        let test = try await TestDatabase.make(.postgres)
        defer { test.close() }
        let first = try #require(test.database as? PostgresStorage)
        let location = try #require(test.postgres?.location)
        let second = try await PostgresStorage.open(
            location, options: .init(maximumConnections: 4, statementTimeout: .seconds(10), writeBatchLeaders: 1), logger: PostgresTestDatabase.logger)
        defer { Task { await second.close() } }
        try await first.write { connection in
            try await connection.execute("INSERT INTO users (id, username, password_hash, created_at) VALUES (1, 'batch', 'x', '2026-06-01T00:00:00.000Z')")
            // A shop's worth of sessions, so that the plans look rows up by index in each
            // batch's order (on a few rows a scan in the table's order would lock them in one
            // order whatever the batch's).
            try await connection.executeScript(
                """
                INSERT INTO sessions (id, version, state, created_at, updated_at, trail_seq, trail_hash, layout, photo_ids)
                    SELECT 'filler-' || g, 1, '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 0, 'x', 'stack', '{}'
                    FROM generate_series(1, 20000) g;
                ANALYZE sessions;
                """)
        }
        for round in 0..<6 {
            let ids = (0..<40).map { "two-\(round)-\($0)" }
            for id in ids { #expect(try await first.writeDecision(Self.write(id, version: 1, expecting: nil)) == .written) }
            let outcomes = try await withThrowingTaskGroup(of: (String, ActionWriteOutcome).self) { group in
                for (storage, order) in [(first, ids), (second, ids.reversed())] {
                    for id in order {
                        group.addTask { (id, try await storage.writeDecision(Self.write(id, version: 2, expecting: .goesThrough))) }
                    }
                }
                var outcomes: [String: [ActionWriteOutcome]] = [:]
                for try await (id, outcome) in group { outcomes[id, default: []].append(outcome) }
                return outcomes
            }
            for id in ids {
                let got = outcomes[id] ?? []
                #expect(got.filter { $0 == .written }.count == 1 && got.filter { $0 == .moved }.count == 1, "\(id): \(got)")
            }
        }
        #expect(first.batchesRefused.load(ordering: .relaxed) == 0 && second.batchesRefused.load(ordering: .relaxed) == 0)
        #expect(second.navigationWrites.sent.largest > 1)
        let rows = try await first.read { try await $0.queryOne("SELECT count(*) AS n FROM audit_events")?.int64("n") }
        #expect(rows == Int64(6 * 40 * 2), "one creation row and one written row per session")
    }

    /// A write of `id` to `version` (1: its creation), one audit row, made to meet `kind`.
    static func write(_ id: String, version: Int, expecting kind: Kind?) -> ActionWrite {
        let at = "2026-06-01T00:00:0\(version).000Z"
        let row = SessionRow(
            id: id, version: version, state: #"{"v":\#(version),"quote":"\"x\" \\ y"}"#, userID: 1, createdAt: at, updatedAt: at, trailSeq: version,
            trailHash: "h\(version)", layout: "stack", topScreen: "photo", tokenID: nil, photoIDs: [1])
        let audit = [AuditRowValues(
            sessionID: id, seq: version, at: at, actor: "client", userID: nil, username: nil, coordinator: "app", step: "screen.push",
            screen: "photo", detail: #"{"photoId":1}"#, previousHash: "h\(version - 1)", hash: "h\(version)")]
        guard let kind else { return ActionWrite(row: row, kind: .create, audit: audit, at: at) }
        var expectedVersion = version - 1
        var expectedTrail = version - 1
        var assumptions = ActionWrite.Assumptions()
        switch kind {
        case .goesThrough: break
        case .versionMoved: expectedVersion += 5
        case .trailMoved: expectedTrail += 5
        case .tokenRevoked: assumptions.tokenUnrevoked = 1
        case .photoBought: assumptions.notBought = .init(userID: 1, photoIDs: [1, 2])
        case .listChanged: assumptions.purchaseCount = .init(userID: 1, count: 0)
        case .movedAndRevoked:
            expectedVersion += 5
            assumptions.tokenUnrevoked = 1
        }
        return ActionWrite(
            row: row, kind: .update(expectedVersion: expectedVersion, expectedTrailSeq: expectedTrail), audit: audit, at: at, assumptions: assumptions)
    }
}
