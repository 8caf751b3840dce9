import DatabaseAccess
import Foundation
import PhotosCore
import PhotosdProcess
import PhotosModel
import PhotosTestSupport
import Testing

/// The operator console over HTTP against a real photosd on both stores: where it listens, its
/// sign-in (cookie, CSRF, limits, idle expiry), roles, the operator actions and their audit rows,
/// the security headers, and its pages on a database of 100,000 sessions. (The browser's side —
/// scripts, live updates, screenshots — is `ConsoleBrowserTests`.) One test at a time: each starts
/// a photosd (two on PostgreSQL), and all at once they loaded CI's two cores so much that other
/// suites' timing bounds (the PostgreSQL outage test's) failed.
@Suite("Operator console", .serialized)
struct ConsoleTests {
    static let operatorPassword = "acting carefully"
    static let viewerPassword = "watching closely"

    /// photosd on a harness's database with operators otto (`operator`) and vera (`viewer`).
    struct Fixture {
        let harness: ServerHarness
        let daemon: Daemon
        let console: ConsoleClient

        static func start(_ store: TestStore, environment: [String: String] = [:]) async throws -> Fixture {
            let harness = try await ServerHarness.make(store)
            let database = harness.configuration.databasePath
            for (name, role, password) in [("otto", "operator", operatorPassword), ("vera", "viewer", viewerPassword)] {
                let added = try await runProcess(
                    Daemon.binDirectory + "/photos-admin", ["operators", "add", name, "--role", role, "--password-stdin", "--db", database],
                    stdin: password, in: harness.directory.path)
                #expect(added.status == 0, "\(added.output)")
            }
            let daemon = try await Daemon(
                ["--db", database, "--seed-demo"], in: harness.directory.path,
                environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": harness.configuration.auditSigningKeyPath].merging(environment) { $1 })
            let url = try await daemon.consoleURL()
            return Fixture(harness: harness, daemon: daemon, console: ConsoleClient(baseURL: try #require(url, "no console: \(daemon.log)")))
        }

        func close() {
            _ = daemon.stop()
            harness.close()
        }

        /// A new client session (API) left on the sign-in screen of a purchase of photo 1.
        func sessionWaitingToBuy() async throws -> String {
            let (_, created) = try await daemon.request("POST", "/v1/sessions")
            let id = try #require(created["id"] as? String)
            _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":1}"#)
            _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"buy"}"#)
            return id
        }

        /// The session's audit rows as `actor step`.
        func trail(_ id: String) async throws -> [String] {
            try await harness.query("SELECT actor, step FROM audit_events WHERE session_id = \(id) ORDER BY seq").map {
                "\(try $0.string(0)) \(try $0.string(1))"
            }
        }
    }

    @Test("an operator's sign-in and purchase from the console wake a follower of the session's change feed within 100 ms: the commit is published, whoever made it", arguments: TestStore.all)
    func consoleActionsWakeFollowers(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        try await f.console.signIn("otto", password: Self.operatorPassword)
        // Four operator actions, each with a device waiting on the session's feed. A follower that
        // heard of them only from its once-a-second re-read would answer up to a second late.
        for _ in 0..<2 {
            let id = try await f.sessionWaitingToBuy()
            let csrf = try #require(try await f.console.get("/console/sessions/\(id)").csrf)
            for action in ["sign-in", "purchase"] {
                let (_, view) = try await f.daemon.request("GET", "/v1/sessions/\(id)")
                let version = try #require(view["version"] as? Int)
                let clock = ContinuousClock()
                let follower = Task { () throws -> (ContinuousClock.Instant, Int) in
                    let (_, answer) = try await f.daemon.request("GET", "/v1/sessions/\(id)/changes?after=\(version)&wait=20")
                    return (clock.now, answer["version"] as? Int ?? 0)
                }
                try await Task.sleep(for: .milliseconds(300))  // the follower's wait has begun
                let form = action == "sign-in" ? ["username": "alice", "csrf": csrf] : ["csrf": csrf]
                let posted = try await f.console.post("/console/sessions/\(id)/\(action)", form: form)
                let answered = clock.now
                #expect(posted.status == 303, "\(action): \(posted.status)")
                let (heard, heardVersion) = try await follower.value
                #expect(heardVersion > version, "\(action): the follower's answer is the new version")
                #expect(heard - answered < .milliseconds(100), "\(action): the follower heard \(heard - answered) after the console's answer")
            }
        }
    }

    @Test("the API port serves no console, the console port no API", arguments: TestStore.all)
    func listenersApart(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        let (status, body) = try await f.daemon.request("GET", "/console/sessions")
        #expect(status == 404 && body["error"] != nil, "the API port answered /console: \(status)")
        let api = try await f.console.get("/v1/photos")
        #expect(api.status == 404)
        #expect(api.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(!f.daemon.log.contains("console listening on 127.0.0.1:8081"), "a test photosd took the default console port")
    }

    @Test("sign-in: the cookie's flags, the form's CSRF token, a wrong password, no page without a session; the cookie is stored only as its hash", arguments: TestStore.all)
    func signIn(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        let away = try await f.console.get("/console/sessions")
        #expect(away.status == 303 && away.headers["location"] == "/console/sign-in")
        #expect(try await f.console.post("/console/sessions/x/purchase", form: [:]).status == 401)

        // The form's token must come with its cookie: a page elsewhere posting the form has neither.
        let forged = try await f.console.post("/console/sign-in", form: ["csrf": "guessed-token-value", "username": "otto", "password": Self.operatorPassword])
        #expect(forged.status == 403, "\(forged.body)")
        let wrong = try await f.console.signIn("otto", password: "not it")
        #expect(wrong.status == 401 && wrong.body.contains("Wrong operator name or password"))
        #expect(f.console.cookies["photosd_console"] == nil)

        let signedIn = try await f.console.signIn("otto", password: Self.operatorPassword)
        #expect(signedIn.status == 303 && signedIn.headers["location"] == "/console/sessions")
        let cookie = try #require(signedIn.setCookies.first { $0.hasPrefix("photosd_console=") })
        for flag in ["HttpOnly", "SameSite=Strict", "Path=/console"] { #expect(cookie.contains(flag), "\(cookie)") }
        #expect(!cookie.contains("Secure"), "Secure only with console.secureCookies")
        let value = try #require(f.console.cookies["photosd_console"])
        let stored = try await f.harness.query("SELECT id_hash FROM console_sessions").map { try $0.string(0) }
        #expect(stored == [SecureToken.sha256Hex(value)], "the cookie itself is never stored")

        let page = try await f.console.get("/console/sessions")
        #expect(page.status == 200)
        #expect(page.headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(page.headers["content-security-policy"]?.contains("unsafe-inline") == false)
        #expect(page.headers["x-frame-options"] == "DENY")
        #expect(page.headers["referrer-policy"] == "no-referrer")
        #expect(page.body.firstMatch(of: /<script(?![^>]*\ssrc=)/) == nil, "an inline script")
        #expect(page.body.contains("otto (operator)"))

        let signedOut = try await f.console.post("/console/sign-out", form: ["csrf": page.csrf ?? ""])
        #expect(signedOut.status == 303)
        #expect(try await f.harness.query("SELECT count(*) FROM console_sessions").first?.int(0) == 0)
        #expect(try await f.console.get("/console/sessions").status == 303)
    }

    @Test("console.secureCookies marks the cookie Secure")
    func secureCookies() async throws {
        let f = try await Fixture.start(.sqlite, environment: ["PHOTOSD_CONSOLE_SECURE_COOKIES": "true"])
        defer { f.close() }
        let signedIn = try await f.console.signIn("vera", password: Self.viewerPassword)
        #expect(signedIn.setCookies.first { $0.hasPrefix("photosd_console=") }?.contains("; Secure") == true)
    }

    @Test("the sign-in form is limited like the API's, in counts of its own (failed API sign-ins of the same name use none)")
    func signInLimit() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        for _ in 0..<6 {
            _ = try await f.daemon.request("POST", "/v1/auth/sign-in", body: #"{"username": "otto", "password": "wrong password"}"#)
        }
        #expect(try await f.console.signIn("otto", password: Self.operatorPassword).status == 303)
        let other = ConsoleClient(baseURL: f.console.baseURL)
        for attempt in 1...5 {
            #expect(try await other.signIn("otto", password: "wrong \(attempt)").status == 401)
        }
        let limited = try await other.signIn("otto", password: Self.operatorPassword)
        #expect(limited.status == 429, "the right password too, once limited")
        #expect(limited.headers["retry-after"].flatMap(Int.init).map { $0 > 0 } == true)
    }

    @Test("the console trusts no proxy of the API's: behind an SSH tunnel (peer 127.0.0.1) a forged X-Forwarded-For does not escape the sign-in limit")
    func consoleIgnoresTheAPIsProxies() async throws {
        let f = try await Fixture.start(.sqlite, environment: ["PHOTOSD_SERVER_TRUSTED_PROXIES": "127.0.0.1, ::1"])
        defer { f.close() }
        let forger = ConsoleClient(baseURL: f.console.baseURL)
        for attempt in 1...5 {
            forger.extraHeaders = ["X-Forwarded-For": "198.51.100.\(attempt)"]
            #expect(try await forger.signIn("otto", password: "wrong \(attempt)").status == 401)
        }
        forger.extraHeaders = ["X-Forwarded-For": "198.51.100.99"]
        #expect(try await forger.signIn("otto", password: Self.operatorPassword).status == 429, "a forged address was a new client")
    }

    @Test("a console session idle past console.sessionMinutes has ended", arguments: TestStore.all)
    func idleExpiry(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        try await f.console.signIn("vera", password: Self.viewerPassword)
        #expect(try await f.console.get("/console/sessions").status == 200)
        try await f.harness.execute("UPDATE console_sessions SET last_seen = \("2026-01-01T00:00:00.000Z")")
        let expired = try await f.console.get("/console/sessions")
        #expect(expired.status == 303 && expired.headers["location"] == "/console/sign-in")
        #expect(try await f.harness.query("SELECT count(*) FROM console_sessions").first?.int(0) == 0)
    }

    @Test("a client session that ended (idle past sessions.idleExpirySeconds) shows as ended: in the list, and on its page as its trail left it, with no action", arguments: TestStore.all)
    func endedClientSession(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        let id = try await f.sessionWaitingToBuy()
        // Idle since long before the 30 days photosd keeps sessions: the next request ends it.
        try await f.harness.execute("UPDATE sessions SET updated_at = \("2020-01-01T00:00:00.000Z") WHERE id = \(id)")
        let (status, body) = try await f.daemon.request("GET", "/v1/sessions/\(id)")
        #expect(status == 410 && (body["error"] as? [String: Any])?["code"] as? String == "session_expired", "\(body)")
        #expect(try await f.trail(id).last == "system session.expired")
        try await f.console.signIn("otto", password: Self.operatorPassword)
        let page = try await f.console.get("/console/sessions/\(id)")
        #expect(page.status == 200)
        let endedAt = try #require(try await f.harness.query("SELECT ended_at FROM sessions WHERE id = \(id)").first?.string(0))
        #expect(page.body.contains("Ended at \(endedAt) after being idle.") && !page.body.contains("data-action=\"purchase\""), "\(page.body.prefix(2_000))")
        #expect(page.body.contains("signIn"), "the page should show the screens the trail left")
        let list = try await f.console.get("/console/sessions")
        #expect(list.body.contains(">ended<"), "\(list.body.prefix(3_000))")

        // A trail edited by hand (the flow's start loses its photo) is refused, naming the step,
        // never drawn with a default ("photo 0").
        try await f.harness.execute(
            store == .postgres ? "ALTER TABLE audit_events DISABLE TRIGGER USER" : "DROP TRIGGER audit_events_no_update")
        try await f.harness.execute(
            "UPDATE audit_events SET detail = replace(detail, '\"photoId\":', '\"photo\":') WHERE session_id = \(id) AND step = 'coordinator.start' AND coordinator = 'app/buy'")
        let edited = try await f.console.get("/console/sessions/\(id)")
        #expect(edited.status == 409, "\(edited.status) \(edited.body.prefix(2_000))")
        #expect(edited.body.contains("trail cannot be replayed: audit seq") && edited.body.contains("without its presentation and photoId"), "\(edited.body.prefix(2_000))")
    }

    @Test("a viewer sees no action and is refused when it posts one; an operator's actions need the CSRF token and are audited as operator:<name>", arguments: TestStore.all)
    func rolesAndActions(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        let id = try await f.sessionWaitingToBuy()
        let before = try await f.trail(id)

        let viewer = ConsoleClient(baseURL: f.console.baseURL)
        try await viewer.signIn("vera", password: Self.viewerPassword)
        let seen = try await viewer.get("/console/sessions/\(id)")
        #expect(seen.status == 200 && seen.body.contains("signIn"))
        #expect(!seen.body.contains("Complete purchase") && !seen.body.contains("Sign in as user"))
        let refused = try await viewer.post("/console/sessions/\(id)/purchase", form: ["csrf": seen.csrf ?? ""])
        #expect(refused.status == 403)

        try await f.console.signIn("otto", password: Self.operatorPassword)
        let page = try await f.console.get("/console/sessions/\(id)")
        #expect(page.body.contains("Complete purchase"))
        let csrf = try #require(page.csrf)
        #expect(try await f.console.post("/console/sessions/\(id)/sign-in", form: ["username": "alice"]).status == 403, "no CSRF token")
        #expect(try await f.console.post("/console/sessions/\(id)/sign-in", form: ["username": "alice", "csrf": String(csrf.reversed())]).status == 403)
        #expect(try await f.trail(id) == before, "a refused post changed nothing")

        let signedIn = try await f.console.post("/console/sessions/\(id)/sign-in", form: ["username": "alice", "csrf": csrf])
        #expect(signedIn.status == 303 && signedIn.headers["location"] == "/console/sessions/\(id)?done=signed-in")
        let bought = try await f.console.post("/console/sessions/\(id)/purchase", form: ["csrf": csrf])
        #expect(bought.status == 303)
        let after = try await f.trail(id)
        #expect(after.contains("operator:otto auth.signIn"), "\(after)")
        #expect(after.contains("operator:otto purchase.completed"), "\(after)")
        let shown = try await f.console.get("/console/sessions/\(id)?done=purchased")
        #expect(shown.body.contains("purchase.completed") && shown.body.contains("Purchase completed."))

        // An earlier step: the stacks as they were (only the photos list after step 3).
        let earlier = try await f.console.get("/console/sessions/\(id)?at=3")
        #expect(earlier.body.contains("As it was after step"))
        #expect(earlier.body.contains(#"<div class="screen top" data-screen="photos">photos</div>"#), "\(earlier.body)")
        #expect(!earlier.body.contains("Complete purchase"), "no action on a past state")
        #expect(try await f.console.get("/console/sessions/\(id)?at=999").status == 404)
        #expect(try await f.console.get("/console/sessions/no-such-session").status == 404)

        let list = try await f.console.get("/console/sessions?user=alice")
        #expect(list.body.contains(#"data-session-id="\#(id)""#))
        #expect(try await f.console.get("/console/sessions?user=bob").body.contains(#"data-session-id="\#(id)""#) == false)
    }

    @Test("the console's contract names (design §11): the form field username, data-session-id, data-seq, data-screen, data-action, data-verify")
    func contractNames() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        let form = try await f.console.get("/console/sign-in")
        #expect(form.body.contains(#"name="username""#) && form.body.contains(#"name="password""#))
        #expect(try await f.console.signIn("otto", password: Self.operatorPassword).status == 303, "signed in through the field username")
        let id = try await f.sessionWaitingToBuy()
        #expect(try await f.console.get("/console/sessions").body.contains(#"data-session-id="\#(id)""#))
        let page = try await f.console.get("/console/sessions/\(id)")
        for hook in [#"data-seq="1""#, #"data-screen="photos""#, #"data-screen="signIn""#, #"data-action="sign-in""#, #"data-action="purchase""#] {
            #expect(page.body.contains(hook), "\(hook) missing from the session page")
        }
        #expect(try await f.console.post("/console/audit/verify", form: ["csrf": page.csrf ?? ""]).status == 303)
        var audit = try await f.console.get("/console/audit")
        for _ in 0..<100 where !audit.body.contains("data-verify=") {
            try await Task.sleep(for: .milliseconds(100))
            audit = try await f.console.get("/console/audit")
        }
        #expect(audit.body.contains(#"data-verify="ok""#), "\(audit.body)")
        // Tampering makes it "failed".
        try await f.harness.execute("DROP TRIGGER IF EXISTS audit_events_no_update")
        try await f.harness.execute(#"UPDATE audit_events SET detail = '{"tampered":true}' WHERE session_id = \#(id) AND seq = 2"#)
        #expect(try await f.console.post("/console/audit/verify", form: ["csrf": page.csrf ?? ""]).status == 303)
        for _ in 0..<100 {
            audit = try await f.console.get("/console/audit")
            if audit.body.contains(#"data-verify="failed""#) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(audit.body.contains(#"data-verify="failed""#), "\(audit.body)")
    }

    @Test("the funnel page splits a flow experiment by variant, as the CLI's report does; the session JSON lists its exposure", arguments: TestStore.all)
    func experimentSplit(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        // Before any purchase flow: photosd reads the experiments when the first one starts.
        let added = try await runProcess(
            Daemon.binDirectory + "/photos-admin",
            ["experiments", "add", "sheet", "--point", "buy.presentation", "--variants", "push:0,modal:100", "--db", f.harness.configuration.databasePath],
            in: f.harness.directory.path)
        #expect(added.status == 0, "\(added.output)")
        for _ in 0..<2 {
            let id = try await f.sessionWaitingToBuy()
            let (status, session) = try await f.daemon.request("GET", "/v1/sessions/\(id)")
            #expect(status == 200)
            #expect((session["experiments"] as? [[String: String]]) == [["name": "sheet", "variant": "modal"]], "\(session)")
            #expect((session["navigation"] as? [[String: Any]])?.count == 2, "a sheet over [photos, photo]: \(session)")
        }
        try await f.console.signIn("vera", password: ConsoleTests.viewerPassword)
        let page = try await f.console.get("/console/funnel?experiment=sheet")
        #expect(page.status == 200, "\(page.body.prefix(500))")
        #expect(page.body.contains(#"data-experiment="sheet""#))
        let row = try #require(page.body.firstMatch(of: /<tr data-variant="modal"><td>modal<\/td><td>(\d+)<\/td><td>(\d+)<\/td><td>(\d+)<\/td>/), "\(page.body)")
        #expect(row.1 == "2" && row.2 == "0" && row.3 == "2", "exposed 2, reached buy 0, asked to sign in 2")
        #expect(page.body.contains(#"<option value="sheet" selected>"#))
        let chart = try await f.console.get("/console/funnel/experiment.svg?name=sheet")
        #expect(chart.status == 200 && chart.headers["content-type"] == "image/svg+xml" && chart.body.contains("Experiment sheet"))
        #expect(try await f.console.get("/console/funnel?experiment=nope").status == 404)
        #expect(try await f.console.get("/console/funnel").body.contains("Compare the variants"))
    }

    @Test("audit and funnel pages: the newest checkpoint, the key, a background verify that reports; the funnel's chart")
    func auditAndFunnel() async throws {
        let f = try await Fixture.start(.sqlite, environment: ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1"])
        defer { f.close() }
        _ = try await f.sessionWaitingToBuy()
        try await f.console.signIn("vera", password: Self.viewerPassword)
        try await Task.sleep(for: .seconds(2))
        let audit = try await f.console.get("/console/audit")
        #expect(audit.body.contains("<dt>Number</dt>") && audit.body.contains("Public key"), "\(audit.body)")
        #expect(try await f.console.post("/console/audit/verify", form: ["csrf": audit.csrf ?? ""]).status == 303)
        var text = ""
        let limit = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < limit {
            text = try await f.console.get("/console/audit/verify/status").body
            if text.contains("intact") || text.contains("FAILED") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(text.contains("audit trail intact"), "\(text)")
        // An altered row (behind the triggers' back) is named as photos-admin audit verify names it.
        try await f.harness.execute("DROP TRIGGER audit_events_no_update")
        try await f.harness.execute("UPDATE audit_events SET detail = '{\"count\":7}' WHERE id = 2")
        #expect(try await f.console.post("/console/audit/verify", form: ["csrf": audit.csrf ?? ""]).status == 303)
        let failLimit = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < failLimit {
            text = try await f.console.get("/console/audit/verify/status").body
            if text.contains("FAILED") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(text.contains("audit verify FAILED") && text.contains("row id 2"), "\(text)")
        let funnel = try await f.console.get("/console/funnel?days=7")
        #expect(funnel.status == 200 && funnel.body.contains("asked to sign in"))
        let chart = try await f.console.get("/console/funnel.svg?days=7")
        #expect(chart.headers["content-type"] == "image/svg+xml" && chart.body.contains("<svg"))
        #expect(try await f.console.get("/console/funnel?days=0").status == 400)
    }

    @Test("on 100,000 sessions every page answers within its budget: the list and a long trail paginate, by index")
    func bigDatabase() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        try await f.harness.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
            INSERT INTO sessions (id, version, state, user_id, created_at, updated_at, trail_seq, trail_hash, layout, top_screen, token_id, photo_ids)
            SELECT printf('bulk%06d', i), 1, '{}', NULL, strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'),
                strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'), 0,
                '0000000000000000000000000000000000000000000000000000000000000000',
                CASE i % 2 WHEN 0 THEN 'stack' ELSE 'tabs' END, CASE i % 3 WHEN 0 THEN 'photo' ELSE 'photos' END, NULL, '{}'
            FROM n
            """)
        // A long trail: 300 actions.
        let (_, created) = try await f.daemon.request("POST", "/v1/sessions")
        let id = try #require(created["id"] as? String)
        for index in 0..<150 {
            _ = try await f.daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":\#(index % 5 + 1)}"#)
            _ = try await f.daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"back"}"#)
        }
        try await f.console.signIn("vera", password: Self.viewerPassword)
        let list = try await f.console.get("/console/sessions")
        let next = try #require(list.body.firstMatch(of: /class="next" href="([^"]+)"/).map { String($0.1).replacingOccurrences(of: "&amp;", with: "&") })
        let pages = [
            "/console/sessions", next, "/console/sessions?screen=photo&layout=tabs", "/console/sessions?user=alice",
            "/console/sessions?since=2026-01-02", "/console/sessions/\(id)", "/console/sessions/\(id)?from=201",
            "/console/sessions/\(id)?at=300", "/console/audit", "/console/funnel",
        ]
        let budget = Duration.seconds(2)
        for page in pages {
            let started = ContinuousClock.now
            let answer = try await f.console.get(page)
            let took = ContinuousClock.now - started
            #expect(answer.status == 200, "\(page): \(answer.status)")
            #expect(took < budget, "\(page) took \(took)")
            #expect(answer.body.components(separatedBy: "data-session-id=").count - 1 <= 50, "\(page): more than a page of sessions")
            #expect(answer.body.components(separatedBy: "<li class=\"step").count - 1 <= 200, "\(page): more than a page of steps")
        }
        // The list walks an index, newest first, whatever the table's size.
        let plan = try await f.harness.query(
            "EXPLAIN QUERY PLAN SELECT id FROM sessions s ORDER BY s.created_at DESC, s.id DESC LIMIT 51"
        ).map { try $0.string(3) }.joined(separator: " | ")
        #expect(plan.contains("sessions_by_created"), "\(plan)")
    }

    @Test("two photosd on one PostgreSQL database: each serves its own console over the whole database", .enabled(if: PostgresTestDatabase.available))
    func twoInstances() async throws {
        let first = try await Fixture.start(.postgres)
        defer { first.close() }
        // The second instance in the same directory: the same secret and signing key, as a deployment's must.
        let second = try await Daemon(
            ["--db", first.harness.configuration.databasePath], in: first.harness.directory.path,
            environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": first.harness.configuration.auditSigningKeyPath])
        defer { _ = second.stop() }
        let url = try await second.consoleURL()
        let otherConsole = ConsoleClient(baseURL: try #require(url))
        #expect(otherConsole.baseURL != first.console.baseURL)

        // A session made through the second instance's API, seen and completed from the first's console…
        let (_, created) = try await second.request("POST", "/v1/sessions")
        let id = try #require(created["id"] as? String)
        _ = try await second.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"buyPhoto","photoId":2}"#)
        try await first.console.signIn("otto", password: Self.operatorPassword)
        let list = try await first.console.get("/console/sessions")
        #expect(list.body.contains(#"data-session-id="\#(id)""#))
        let page = try await first.console.get("/console/sessions/\(id)")
        let csrf = try #require(page.csrf)
        #expect(try await first.console.post("/console/sessions/\(id)/sign-in", form: ["username": "alice", "csrf": csrf]).status == 303)
        // …and the second instance's console shows what the first did.
        try await otherConsole.signIn("vera", password: Self.viewerPassword)
        let seen = try await otherConsole.get("/console/sessions/\(id)")
        #expect(seen.body.contains("signed in as <strong>alice</strong>"), "\(seen.body)")
        #expect(seen.body.contains("operator:otto"))
    }
}
