import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
@testable import Sessions
import SQLiteStore
import Testing

/// On PostgreSQL an action is one read and one write: two statements, two round trips (counted
/// by the server itself, `pg_stat_statements`, which `scripts/postgres-test-server` loads).
@Suite("PostgreSQL round trips", .enabled(if: PostgresTestDatabase.available))
struct PostgresRoundTripTests {
    /// Forgets the statements counted for this database so far (the reset itself then counts 1).
    enum Reset: NamedStatement {
        static let name = "test_reset_statement_counts"
        static let sql: SQL = "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)"
    }

    /// Statements the server ran for this database since the reset (this one is counted only
    /// once it ends).
    enum Count: NamedStatement {
        static let name = "test_count_statements"
        static let sql: SQL = "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
    }

    /// What `body` returns, and how many statements the server ran for this database meanwhile
    /// (the reset before it and the count after it left out).
    static func statements<T>(on store: any SingleStatementStore, _ body: () async throws -> T) async throws -> (T, Int) {
        _ = try await store.run(Reset.self, arguments: [])
        let value = try await body()
        let counted = try await store.run(Count.self, arguments: []).first?.int(0) ?? 0
        return (value, counted - 1)
    }

    @Test("an action that checks no password is at most 2 round trips: one read, one write")
    func actionIsTwoRoundTrips() async throws {
        // As photosd holds the experiments: read at a purchase flow's start at most once a
        // second (here: once, in the warm-up), not per action.
        let h = try await SessionHarness.make(.postgres, experimentsMaxAge: .seconds(600))
        defer { h.close() }
        let test = try h.test
        _ = try await test.database.write { try await $0.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        let sessions = try h.sessions
        let id = try await sessions.createSession(layout: .stack, link: nil, actor: .client).session.id
        // Warm up: each pooled connection prepares the two statements once (a parse each); a
        // purchase flow's start reads the experiments once.
        for _ in 0..<3 {
            _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
            _ = try await sessions.apply(ClientAction(.buy), to: id)
            _ = try await sessions.apply(ClientAction(.cancel), to: id)
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
            let (result, counted) = try await Self.statements(on: store) {
                try await sessions.apply(action, to: id, expectVersion: nil, idempotencyKey: key, actor: .client)
            }
            #expect(result.error == nil, "\(label): \(String(describing: result.error))")
            counts[label] = counted
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
        _ = try await test.database.write { try await $0.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        let sessions = try h.sessions
        let store = try #require(test.database as? any SingleStatementStore)
        // Warm up: each pooled connection prepares the statement once.
        for _ in 0..<3 { _ = try await sessions.createSession(layout: .stack, link: nil, actor: .client) }
        for (layout, link) in [(SessionLayout.stack, nil), (.tabs, nil), (.tabs, try DeepLink(parsing: "/purchases"))] as [(SessionLayout, DeepLink?)] {
            let (created, counted) = try await Self.statements(on: store) {
                try await sessions.createSession(layout: layout, link: link, actor: .client)
            }
            #expect(counted == 1, "\(layout) \(String(describing: link)): \(counted) round trips")
            // What was written is what the general path writes: the session reads back, its trail verifies.
            let view = try await sessions.session(id: created.session.id)
            #expect(view.version == created.session.version)
            #expect(try await sessions.events(sessionID: created.session.id).map(\.seq) == Array(1...created.events.count))
        }
        let verification = try await test.database.read { try await AuditChains.verify(on: $0, publicKey: nil) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
    }

    @Test("columns beside the state that lie (an older photosd, a hand edit) cost one more read, never a wrong answer")
    func lyingColumnsAreReadAgain() async throws {
        let h = try await SessionHarness.make(.postgres)
        defer { h.close() }
        let test = try h.test
        _ = try await test.database.write { try await $0.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        let sessions = try h.sessions
        let store = try #require(test.database as? any SingleStatementStore)
        let id = try await sessions.createSession(layout: .stack, link: nil, actor: .client).session.id
        _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 2), to: id)
        // The row now says it names no photo, holds a token and is a tab bar: all untrue.
        _ = try await test.database.write { connection in
            try await connection.execute("UPDATE sessions SET photo_ids = '{}', token_id = 999, layout = 'tabs' WHERE id = \(id)")
        }
        // Another instance (this one holds the state it wrote, and would read nothing).
        let other = try test.sessions(auth: try h.auth)
        let (bought, counted) = try await Self.statements(on: store) { try await other.apply(ClientAction(.buy), to: id) }
        #expect(bought.error == nil, "\(String(describing: bought.error))")
        #expect(bought.session.top?.screen == .signIn, "buying photo 2 signed out leads to sign-in")
        #expect(counted > 2, "the one read, the facts read again (a transaction), the write: \(counted)")
        // The write put the truth back: the next action of a third instance is two round trips again.
        let columns = try await test.database.read { connection in
            try await connection.queryOne("SELECT photo_ids, token_id, layout FROM sessions WHERE id = \(id)")
        }
        #expect(try columns?.string(0) == "{2}")
        #expect(columns?.optionalInt64(1) == nil)
        #expect(try columns?.string(2) == "stack")
        let third = try test.sessions(auth: try h.auth)
        let (cancelled, again) = try await Self.statements(on: store) { try await third.apply(ClientAction(.cancel), to: id) }
        #expect(cancelled.error == nil && again == 2, "\(again) round trips once the columns are true")
    }

    @Test("a state another instance moved is fetched again; a cached one is not fetched")
    func cachedStateFollowsOtherInstances() async throws {
        let h = try await SessionHarness.make(.postgres)
        defer { h.close() }
        let test = try h.test
        let (first, second) = (try h.sessions, try test.sessions(auth: try h.auth))
        let id = try await first.createSession(layout: .stack, link: nil, actor: .client).session.id
        _ = try await first.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
        _ = try await first.apply(ClientAction(.back), to: id)
        // The first instance has cached the state at [photos]; the second moves it on.
        _ = try await second.apply(ClientAction(.selectPhoto, photoId: 3), to: id)
        let back = try await first.apply(ClientAction(.back), to: id)
        #expect(back.error == nil, "the first instance decided on the state the second left: \(String(describing: back.error))")
        #expect(back.session.navigation.first?.screens.map(\.screen) == [.photos])
        // And on its own cached state again (the version it wrote).
        let again = try await first.apply(ClientAction(.selectPhoto, photoId: 2), to: id)
        #expect(again.session.navigation.first?.screens.map(\.screen) == [.photos, .photo])
        #expect(again.session.version == 6)
    }

    @Test("an action on a state and facts this instance knows is one round trip; what changed elsewhere is read and decided again")
    func knownFactsAreOneRoundTrip() async throws {
        let h = try await SessionHarness.make(.postgres)
        defer { h.close() }
        let test = try h.test
        _ = try await test.database.write { try await $0.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        let (first, second) = (try h.sessions, try test.sessions(auth: try h.auth))
        let store = try #require(test.database as? any SingleStatementStore)
        /// The result of `apply` on `coordinator`, the round trips it took, and whether it wrote
        /// on known facts (`held`), tried and was refused (`refused`), or read first (neither).
        func counted(
            _ coordinator: SessionCoordinator, _ action: ClientAction, on id: String, key: String? = nil
        ) async throws -> (result: ActionResult, trips: Int, held: Bool, refused: Bool) {
            let before = coordinator.known.counts
            let (result, count) = try await Self.statements(on: store) {
                try await coordinator.apply(action, to: id, expectVersion: nil, idempotencyKey: key, actor: .client)
            }
            let after = coordinator.known.counts
            #expect(result.error == nil, "\(action.name): \(String(describing: result.error))")
            return (result, count, after.held > before.held, after.refused > before.refused)
        }
        let id = try await first.createSession(layout: .stack, link: nil, actor: .client).session.id
        // Photo 3 is not known here yet: read, then write. Then it is: one write each.
        let unknown = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(unknown.trips == 2 && !unknown.held && !unknown.refused)
        #expect(try await counted(first, ClientAction(.back), on: id).trips == 1)
        let viewed = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(viewed.trips == 1 && viewed.held)
        #expect(viewed.result.session.navigation.first?.screens.last?.purchased == false)

        // Another instance moves the session: the write finds it moved, the read and write follow.
        _ = try await second.apply(ClientAction(.back), to: id)
        let afterMove = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        #expect(afterMove.trips == 3 && afterMove.refused, "a write that kept nothing, the read, the write")
        #expect(afterMove.result.session.navigation.first?.screens.map(\.screen) == [.photos, .photo])
        #expect(afterMove.result.session.version == 6)

        // Signed in (a credential check: the usual way); then the photo is bought elsewhere.
        _ = try await first.apply(ClientAction(.back), to: id)
        _ = try await first.apply(ClientAction(.signIn), to: id)
        _ = try await first.apply(ClientAction(.submit, username: "alice", password: SessionHarness.password), to: id)
        #expect(try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id).trips == 1)
        #expect(try await counted(first, ClientAction(.back), on: id).trips == 1)
        try await h.buyOutside("alice", photoID: 3)
        let owned = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id)
        // The write refused the photo assumed not bought (a statement that fails is not counted by
        // pg_stat_statements: 2 are, the read and the write after it).
        #expect(owned.trips == 2 && owned.refused)
        #expect(owned.result.session.navigation.first?.screens.last?.purchased == true)
        // Now known to be bought: one write again.
        #expect(try await counted(first, ClientAction(.back), on: id).trips == 1)
        #expect(try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id).result.session.navigation.first?.screens.last?.purchased == true)

        // The token is revoked elsewhere: the write refuses the token assumed live; the session is signed out.
        try await h.signOutEverywhere("alice")
        let signedOut = try await counted(first, ClientAction(.back), on: id)
        #expect(signedOut.trips == 2 && signedOut.refused, "the refused write (not counted), the read, the write")
        #expect(signedOut.result.session.user == nil)
        #expect(try await test.sessions(auth: try h.auth).session(id: id).user == nil)

        // A retry reaching this instance of an answer another instance stored (while this one
        // holds the session at its newest version) gets that answer, and changes nothing.
        let answered = try await second.apply(ClientAction(.selectPhoto, photoId: 3), to: id, expectVersion: nil, idempotencyKey: "k-1", actor: .client)
        _ = try await second.apply(ClientAction(.back), to: id, expectVersion: nil, idempotencyKey: "k-2", actor: .client)
        let newest = try await first.session(id: id)
        let retried = try await counted(first, ClientAction(.selectPhoto, photoId: 3), on: id, key: "k-1")
        #expect(retried.trips == 1 && retried.refused, "the refused write (not counted), the read that found the answer: \(retried.trips), \(retried.refused), \(retried.held)")
        #expect(retried.result.session == answered.session)
        #expect(try await first.session(id: id).version == newest.version)
        let verification = try await test.database.read { try await AuditChains.verify(on: $0, publicKey: nil) }
        #expect(verification.isIntact, "\(String(describing: verification.problem))")
    }

    @Test("a tabs session on known facts is one round trip too: the purchase list is assumed by its length")
    func tabsOnKnownFactsAreOneRoundTrip() async throws {
        let h = try await SessionHarness.make(.postgres, experimentsMaxAge: .seconds(600))
        defer { h.close() }
        let test = try h.test
        _ = try await test.database.write { try await $0.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") }
        let coordinator = try h.sessions
        let store = try #require(test.database as? any SingleStatementStore)
        func counted(_ action: ClientAction, _ id: String) async throws -> (result: ActionResult, trips: Int, held: Bool, refused: Bool) {
            let before = coordinator.known.counts
            let (result, trips) = try await Self.statements(on: store) {
                try await coordinator.apply(action, to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
            }
            let after = coordinator.known.counts
            #expect(result.error == nil, "\(action.name): \(String(describing: result.error))")
            return (result, trips, after.held > before.held, after.refused > before.refused)
        }
        func listed(_ result: ActionResult) -> [Int64]? {
            result.session.tabs?.items.first { $0.tab == .purchases }?.screens.first?.photos?.map(\.id)
        }
        // The experiments, read once at a purchase flow's start, are held from then on.
        let warm = try await h.newSession()
        try await h.act(warm, .buyPhoto, photoId: 1)
        let id = try await h.newSession(layout: .tabs)
        try await h.signIn(id)
        // The list was read with the sign-in (a credential check: the usual way), and is known since.
        let known = try await counted(ClientAction(.selectTab, tab: .purchases), id)
        #expect(known.trips == 1 && known.held && listed(known.result) == [])
        try await h.buyOutside("alice", photoID: 2)
        let elsewhere = try await counted(ClientAction(.selectTab, tab: .photos), id)
        // The refused write is not counted by pg_stat_statements: the read and the write are.
        #expect(elsewhere.trips == 2 && elsewhere.refused)
        #expect(listed(elsewhere.result) == [2])
        _ = try await counted(ClientAction(.selectPhoto, photoId: 3), id)
        #expect(try await counted(ClientAction(.buy), id).trips == 1)
        let bought = try await counted(ClientAction(.buy), id)
        // The write alone (`held`: no read before it). Its round trips are not counted here: the first
        // purchase is the first `action_write` on its pooled connection, whose preparation counts too.
        #expect(bought.held && !bought.refused && bought.result.outcome == .purchased)
        #expect(listed(bought.result) == [3, 2])
        let shown = try await counted(ClientAction(.selectTab, tab: .purchases), id)
        #expect(shown.trips == 1 && shown.result.session.navigation.first?.screens.first?.photos?.map(\.id) == [3, 2])
        let verification = try await test.database.read { try await AuditChains.verify(on: $0, publicKey: nil) }
        #expect(verification.isIntact)
    }
}
