import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosClientTesting
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import SQLiteStore
import Testing

/// Photos 1–3 (2.50, 1.00, 3.00) and user alice, and sessions over them: the session
/// coordinator over a migrated database (SQLite or PostgreSQL), or the pure navigation core over
/// a world in memory (`TestStore.memory`).
struct SessionHarness {
    /// The database (nil for the in-memory world).
    let database: TestDatabase?
    /// The in-memory world (nil over a database).
    let memory: InMemorySessions?
    let coordinator: any SessionDriver
    let authService: AuthService?
    static let password = "correct horse"
    static let photos = [Photo(id: 1, title: "Sunset", url: "", priceCents: 250), Photo(id: 2, title: "Harbour", url: "", priceCents: 100), Photo(id: 3, title: "Snow", url: "", priceCents: 300)]

    /// A test that needs SQL ran on the in-memory world.
    struct NoDatabase: Error {}

    static func make(_ store: TestStore = .sqlite, durability: Connection.Synchronous = .normal, experimentsMaxAge: Duration = .zero) async throws -> SessionHarness {
        if store == .memory {
            let memory = InMemorySessions(photos: photos)
            try await memory.addUser("alice", password: password)
            return SessionHarness(database: nil, memory: memory, coordinator: memory, authService: nil)
        }
        let test = try await TestDatabase.make(store, durability: durability)
        let auth = test.auth()
        _ = try await test.catalog.importPhotos(
            photos.map { NewPhoto(title: $0.title, priceCents: $0.priceCents) },
            actor: testOperator)
        _ = try await auth.createUser(username: "alice", password: password, actor: testOperator)
        return SessionHarness(database: test, memory: nil, coordinator: try test.sessions(auth: auth, experimentsMaxAge: experimentsMaxAge), authService: auth)
    }

    /// The database; tests that read SQL run on the stores only.
    var test: TestDatabase { get throws { guard let database else { throw NoDatabase() }; return database } }
    /// The database's auth service.
    var auth: AuthService { get throws { guard let authService else { throw NoDatabase() }; return authService } }

    /// The session coordinator over the database.
    var sessions: SessionCoordinator { get throws { guard let sessions = coordinator as? SessionCoordinator else { throw NoDatabase() }; return sessions } }

    func close() { database?.close() }

    /// Adds a user with a password.
    func addUser(_ username: String, password: String) async throws {
        if let memory { return try await memory.addUser(username, password: password) }
        _ = try await auth.createUser(username: username, password: password, actor: testOperator)
    }

    /// Revokes every token of `username`, from outside any session.
    func signOutEverywhere(_ username: String) async throws {
        if let memory { return await memory.signOutEverywhere(username) }
        _ = try await auth.signOut(username: username, actor: testOperator)
    }

    /// Starts an experiment (`photos-admin experiments add`).
    func addExperiment(_ name: String, _ point: VariationPoint, _ variants: String) async throws {
        let parsed = try Experiment.parseVariants(variants, for: point)
        if let memory { return await memory.addExperiment(Experiment(name: name, point: point, variants: parsed)) }
        _ = try await ExperimentService(database: test.database).add(name: name, point: point, variants: parsed, actor: testOperator)
    }

    /// Stops an experiment (`photos-admin experiments stop`).
    func stopExperiment(_ name: String, keep: String? = nil) async throws {
        if let memory { return await memory.stopExperiment(name, keep: keep) }
        _ = try await ExperimentService(database: test.database).stop(name: name, keep: keep, actor: testOperator)
    }

    /// Buys a photo for `username` outside any session.
    func buyOutside(_ username: String, photoID: Int64) async throws {
        if let memory { return try await memory.buyOutside(username, photoID: photoID) }
        _ = try await test.purchases.buy(username: username, photoID: photoID, actor: testOperator)
    }

    /// The username a bearer token belongs to; throws `unauthorized` as the token API does.
    func tokenUser(_ token: String) async throws -> String {
        if let memory { return try await memory.tokenUser(token) }
        return try await auth.validate(token: token).username
    }

    func newSession(layout: SessionLayout = .stack, link: DeepLink? = nil) async throws -> String {
        let id = try await coordinator.createSession(layout: layout, link: link).session.id
        try await checkInvariants(id)
        return id
    }

    /// The session as the API shows it now.
    func view(_ id: String) async throws -> SessionView { try await coordinator.session(id: id) }

    /// The session's audit rows after `seq`.
    func rows(_ id: String, after seq: Int = 0) async throws -> [AuditRow] {
        try await coordinator.events(sessionID: id, after: seq, limit: 1_000)
    }

    @discardableResult
    func act(
        _ id: String, _ name: ActionName, photoId: Int64? = nil, password: String = SessionHarness.password,
        tab: TabName? = nil, link: DeepLink? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ActionResult {
        let action = name == .submit
            ? ClientAction(.submit, username: "alice", password: password)
            : ClientAction(name, photoId: photoId, tab: tab, link: link)
        let result = try await coordinator.apply(action, to: id)
        expectHandWrittenJSON(result, sourceLocation: sourceLocation)
        if name != .submit || password == SessionHarness.password {
            #expect(result.error == nil, "\(name): \(String(describing: result.error))", sourceLocation: sourceLocation)
        }
        try await checkInvariants(id, sourceLocation: sourceLocation)
        return result
    }

    func signIn(_ id: String) async throws {
        try await act(id, .signIn)
        try await act(id, .submit)
    }

    /// The saved state, checked against the invariants and against a replay of the audit trail.
    @discardableResult
    func checkInvariants(_ id: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> SessionState {
        let (state, rows) = try await savedState(id)
        #expect(state.invariantViolations() == [], sourceLocation: sourceLocation)
        expectWritten(state.jsonText, readsBackAs: state, sourceLocation: sourceLocation)
        #expect(rows.map(\.seq) == Array(1...rows.count), "seq not contiguous", sourceLocation: sourceLocation)
        let replayed = try SessionReplay.state(from: rows)
        // The replay is made without the writer: written and read back, it must come back whole.
        expectWritten(replayed.jsonText, readsBackAs: replayed, sourceLocation: sourceLocation)
        let differing = Self.differingFields(replayed, state)
        #expect(differing.isEmpty, "replaying the audit trail differs from the saved state in \(differing.joined(separator: "; "))", sourceLocation: sourceLocation)
        #expect(replayed == state, "replaying the audit trail differs from the saved state", sourceLocation: sourceLocation)
        return state
    }

    /// The fields of `SessionState` in which `replayed` and `saved` differ, each with both values.
    static func differingFields(_ replayed: SessionState, _ saved: SessionState) -> [String] {
        var fields: [String] = []
        func compare<T: Equatable>(_ name: String, _ path: KeyPath<SessionState, T>) {
            if replayed[keyPath: path] != saved[keyPath: path] { fields.append("\(name): replayed \(replayed[keyPath: path]), saved \(saved[keyPath: path])") }
        }
        compare("user", \.user)
        compare("tokenId", \.tokenId)
        compare("stacks", \.stacks)
        compare("coordinators", \.coordinators)
        compare("top", \.top)
        compare("layout", \.layout)
        compare("tabs", \.tabs)
        compare("experiments", \.experiments)
        return fields
    }

    /// The state as saved and the session's whole trail.
    func savedState(_ id: String) async throws -> (SessionState, [AuditRow]) {
        if let memory {
            return (try await memory.savedState(id), try await memory.events(sessionID: id, after: 0, limit: .max))
        }
        return try await test.database.read { connection -> (SessionState, [AuditRow]) in
            let text = try await connection.queryOne("SELECT state FROM sessions WHERE id = \(id)")?.string(0) ?? ""
            let state = try JSONDecoder().decode(SessionState.self, from: Data(text.utf8))
            return await (state, try AuditChains.rows(sessionID: id, limit: 1_000_000, on: connection))
        }
    }

    /// `username:photoId` for every purchase, sorted.
    func purchaseList() async throws -> [String] {
        if let memory { return await memory.purchaseList() }
        return try await test.database.read { connection in
            try await connection.query("SELECT u.username || ':' || p.photo_id FROM purchases p JOIN users u ON u.id = p.user_id ORDER BY 1").map { try $0.string(0) }
        }
    }

    func purchaseCount() async throws -> Int { try await purchaseList().count }

    /// How many sessions exist.
    func sessionCount() async throws -> Int {
        if let memory { return await memory.sessionCount }
        return try await test.database.read { try await $0.queryOne("SELECT count(*) FROM sessions")?.int(0) ?? -1 }
    }
}

/// The writer's JSON (`SessionJSON`, the only encoder of these types) reads back equal — no
/// field lost — and is in canonical form: compact, keys sorted (as `JSONSerialization` writes
/// the same object with sorted keys).
func expectWritten<T: Decodable & Equatable>(_ text: String, readsBackAs value: T, sourceLocation: SourceLocation = #_sourceLocation) {
    let decoded = try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    #expect(decoded == value, "the written JSON does not read back equal: \(text)", sourceLocation: sourceLocation)
    #expect(canonicalJSON(text) == text, "the written JSON is not in canonical form: \(text)", sourceLocation: sourceLocation)
}

/// `text` re-written by `JSONSerialization`: compact, keys sorted, slashes as they are.
func canonicalJSON(_ text: String) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)),
          let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return nil }
    return String(decoding: data, as: UTF8.self)
}

/// An action's answer and its session, as written, read back equal (what is never written —
/// the replay mark, the new session's secret — aside).
func expectHandWrittenJSON(_ result: ActionResult, sourceLocation: SourceLocation = #_sourceLocation) {
    var written = result
    written.isReplay = false
    written.sessionSecret = nil
    expectWritten(result.jsonText, readsBackAs: written, sourceLocation: sourceLocation)
    expectWritten(result.session.jsonText, readsBackAs: result.session, sourceLocation: sourceLocation)
}

/// `[photos, photo] | [signIn]`: every stack's screens, bottom first.
func stacks(_ view: SessionView) -> String {
    view.navigation.map { "[" + $0.screens.map(\.screen.rawValue).joined(separator: ", ") + "]" }.joined(separator: " | ")
}

/// `app(buy(terms))`; a tab coordinator by its id (`app(tab-photos(buy), tab-purchases)`).
func tree(_ view: SessionView) -> String {
    func render(_ node: CoordinatorView) -> String {
        let name = node.kind == .tab ? node.id : node.kind.rawValue
        return node.children.isEmpty ? name : name + "(" + node.children.map(render).joined(separator: ", ") + ")"
    }
    return view.coordinators.map(render) ?? "-"
}

/// `step coordinator screen detail` per row, with `-` for nulls and token/user ids left out.
func steps(_ rows: [AuditRow]) -> [String] {
    rows.map { row in
        var detail = row.detail
        if row.step == "auth.signIn" { detail = "{…}" }
        if row.step == "coordinator.start", let range = detail.range(of: #""id":"[a-z]+(-[a-z0-9]+)?","#, options: .regularExpression) {
            detail.replaceSubrange(range, with: "")
        }
        return [row.step, row.coordinator ?? "-", row.screen ?? "-", detail].joined(separator: " ")
    }
}

func actions(_ view: SessionView) -> [String] { view.top?.actions.map(\.rawValue) ?? [] }

/// `photos*: [photos, photo] · purchases: [purchases]`: every tab's screens, the selected one starred.
func tabBar(_ view: SessionView) -> String {
    guard let tabs = view.tabs else { return "-" }
    return tabs.items.map { item in
        item.tab.rawValue + (item.tab == tabs.selected ? "*" : "") + ": [" + item.screens.map(\.screen.rawValue).joined(separator: ", ") + "]"
    }.joined(separator: " · ")
}
