import Foundation
import Navigation
import PhotosCore
import PhotosTestSupport
import SQLiteStore
import Testing

/// A migrated database with photos 1–3 (2.50, 1.00, 3.00) and user alice, and a session
/// coordinator over it.
struct SessionHarness {
    let test: TestDatabase
    let coordinator: SessionCoordinator
    let auth: AuthService
    static let password = "correct horse"

    static func make(_ store: TestStore = .sqlite, durability: Connection.Synchronous = .normal) async throws -> SessionHarness {
        let test = try await TestDatabase.make(store, durability: durability)
        let auth = test.auth()
        _ = try await test.catalog.importPhotos(
            [NewPhoto(title: "Sunset", priceCents: 250), NewPhoto(title: "Harbour", priceCents: 100), NewPhoto(title: "Snow", priceCents: 300)],
            actor: testOperator)
        _ = try await auth.createUser(username: "alice", password: password, actor: testOperator)
        return SessionHarness(test: test, coordinator: try test.sessions(auth: auth), auth: auth)
    }

    func close() { test.close() }

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
        let (state, rows) = try await test.database.read { connection -> (SessionState, [AuditRow]) in
            let text = try connection.queryOne("SELECT state FROM sessions WHERE id = ?", id)?.string(0) ?? ""
            let state = try JSONDecoder().decode(SessionState.self, from: Data(text.utf8))
            return (state, try AuditLog.rows(sessionID: id, limit: 1_000_000, on: connection))
        }
        #expect(state.invariantViolations() == [], sourceLocation: sourceLocation)
        #expect(state.jsonText == (try encodeSorted(state)), "hand-written state JSON differs from JSONEncoder's", sourceLocation: sourceLocation)
        #expect(rows.map(\.seq) == Array(1...rows.count), "seq not contiguous", sourceLocation: sourceLocation)
        #expect(try SessionReplay.state(from: rows) == state, "replaying the audit trail differs from the saved state", sourceLocation: sourceLocation)
        return state
    }

    func purchaseCount() async throws -> Int {
        try await test.database.read { try $0.queryOne("SELECT count(*) FROM purchases")?.int(0) ?? -1 }
    }
}

/// JSONEncoder's text with sorted keys: what the hand-written encoders must reproduce.
func encodeSorted(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// The hand-written response JSON must be byte for byte what JSONEncoder writes.
func expectHandWrittenJSON(_ result: ActionResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.jsonText == (try? encodeSorted(result)), "hand-written ActionResult JSON differs", sourceLocation: sourceLocation)
    #expect(result.session.jsonText == (try? encodeSorted(result.session)), "hand-written session JSON differs", sourceLocation: sourceLocation)
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
