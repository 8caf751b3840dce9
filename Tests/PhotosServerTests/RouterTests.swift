import DatabaseAccess
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PhotosCore
@testable import PhotosServer
import PhotosTestSupport
import SQLiteStore
import Testing

@Suite("HTTP routes")
struct RouterTests {
    @Test("healthz and metrics", arguments: TestStore.all)
    func healthAndMetrics(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client, readMetrics in
            let health = try await client.get("/healthz")
            #expect(health.status == .ok)
            #expect(health.text == #"{"status":"ok"}"#)
            _ = try await client.newSession()
            // Not on the API's port (the public reaches it): on the metrics listener.
            #expect(try await client.get("/metrics").status == .notFound)
            let metrics = try await readMetrics()
            #expect(metrics.contains("photosd_writer_commits"))
            #expect(metrics.contains("photosd_audit_rows_written_total"))
            #expect(metrics.contains("http_server_request_duration"))
        }
    }

    @Test("sessions: create, get, act, events", arguments: TestStore.all)
    func sessions(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let created = try await client.createSession()
            #expect(created.status == .created)
            let id = try #require(created.json["id"] as? String)
            #expect(created.json["version"] as? Int == 1)
            #expect(created.json["user"] is NSNull)
            #expect(topScreen(created.json) == "photos")

            let fetched = try await client.get("/v1/sessions/\(id)")
            #expect(fetched.status == .ok)
            #expect(fetched.json["id"] as? String == id)

            let selected = try await client.act(id, #"{"action": "selectPhoto", "photoId": 2}"#)
            #expect(selected.status == .ok)
            #expect(selected.json["outcome"] as? String == "navigated")
            #expect(topScreen(selected.json) == "photo")
            #expect((selected.json["events"] as? [Any])?.count == 2)

            let events = try await client.get("/v1/sessions/\(id)/events?after=1&limit=2")
            let rows = try #require(events.json["events"] as? [[String: Any]])
            #expect(rows.map { $0["seq"] as? Int } == [2, 3])
            #expect(Set(rows[0].keys) == ["sessionId", "seq", "at", "actor", "coordinator", "step", "detail"])
            #expect(try await client.get("/v1/sessions/\(id)/events?limit=5000").errorCode == "bad_request")
            #expect(try await client.get("/v1/sessions/\(id)/events?after=x").errorCode == "bad_request")
            // An id that does not exist is answered as a wrong secret: no oracle for ids.
            #expect(try await client.get("/v1/sessions/unknown-session/events", headers: [.authorization: "Session any"]).status == .unauthorized)
        }
    }

    @Test("action errors: 409 with allowed, 400s naming the problem, 404, 413, version conflict", arguments: TestStore.all)
    func actionErrors(store: TestStore) async throws {
        let h = try await ServerHarness.make(store) { $0.maxBodyBytes = 1_024 }
        defer { h.close() }
        try await h.test { client in
            let id = try await client.newSession()
            let rejected = try await client.act(id, #"{"action": "showTerms"}"#)
            #expect(rejected.status == .conflict)
            #expect(rejected.errorCode == "action_not_available")
            #expect((rejected.json["error"] as? [String: Any])?["allowed"] as? [String] == ["selectPhoto", "buyPhoto", "signIn"])

            func expectBadRequest(_ body: String, _ fragment: String, headers: HTTPFields = [.contentType: "application/json"]) async throws {
                let response = try await client.act(id, body, headers: headers)
                #expect(response.status == .badRequest, "\(body)")
                #expect(response.errorCode == "bad_request")
                let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(message.contains(fragment), "\(body): \(message)")
            }
            try await expectBadRequest(#"{"action": "fly"}"#, "unknown action")
            try await expectBadRequest(#"{"action": 1}"#, "field action has the wrong type")
            try await expectBadRequest(#"{"photoId": 1}"#, "missing field action")
            try await expectBadRequest(#"{"action": "selectPhoto", "photoId": "one"}"#, "photoId")
            try await expectBadRequest(#"{"action": "selectPhoto", "photoId": 1.5}"#, "photoId")
            try await expectBadRequest(#"{"action": "selectPhoto"}"#, "selectPhoto needs photoId")
            try await expectBadRequest(#"{"action": "selectPhoto", "photoId": -3}"#, "positive")
            try await expectBadRequest(#"{"action": "#, "malformed JSON")
            try await expectBadRequest("", "empty")
            try await expectBadRequest(String(repeating: "[", count: 600), "JSON")
            let plain = try await client.act(id, #"{"action": "back"}"#, headers: [.contentType: "text/plain"])
            #expect(plain.status == .unsupportedMediaType)
            #expect(plain.errorCode == "unsupported_media_type")
            let invalidUTF8 = try await client.send(
                "/v1/sessions/\(id)/actions", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(bytes: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x7D]))
            #expect(invalidUTF8.status == .badRequest)

            let large = try await client.act(id, #"{"action": "back", "username": ""# + String(repeating: "x", count: 2_000) + #""}"#)
            #expect(large.status == .contentTooLarge)
            #expect(large.errorCode == "payload_too_large")

            let missingPhoto = try await client.act(id, #"{"action": "selectPhoto", "photoId": 9223372036854775807}"#)
            #expect(missingPhoto.status == .notFound)
            #expect(try await client.act("no-such-session", #"{"action": "back"}"#, headers: [.contentType: "application/json", .authorization: "Session any"]).status == .unauthorized)
            #expect(try await client.act(String(repeating: "s", count: 300), #"{"action": "back"}"#).status == .notFound)
            #expect(try await client.act("'%20OR%201=1", #"{"action": "back"}"#).status == .notFound)

            let stale = try await client.act(id, #"{"action": "selectPhoto", "photoId": 1, "expectVersion": 7}"#)
            #expect(stale.status == .conflict)
            #expect(stale.errorCode == "version_conflict")
            let fresh = try await client.act(id, #"{"action": "selectPhoto", "photoId": 1, "expectVersion": 1, "unknownField": true}"#)
            #expect(fresh.status == .ok)

            // Nothing above left a trace but the one action.rejected row and the accepted action.
            let steps = try await h.query("SELECT step FROM audit_trail WHERE session_id = \(id) AND seq > 3").map { try $0.string(0) }
            #expect(steps == ["action.rejected", "action", "screen.push"])
            let unknownRoute = try await client.get("/v2/whatever")
            #expect(unknownRoute.status == .notFound)
            #expect(unknownRoute.errorCode == "not_found")
        }
    }

    @Test("a retried buy with the same Idempotency-Key gives the same answer and one purchase row", arguments: TestStore.all)
    func idempotentBuy(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let id = try await client.newSession()
            _ = try await client.act(id, #"{"action": "selectPhoto", "photoId": 3}"#)
            _ = try await client.act(id, #"{"action": "buy"}"#)
            let signedIn = try await client.act(id, #"{"action": "submit", "username": "alice", "password": "correct horse"}"#)
            #expect(signedIn.json["outcome"] as? String == "signedIn")
            #expect((signedIn.json["token"] as? String)?.count ?? 0 >= 43)
            let headers: HTTPFields = [.contentType: "application/json", HTTPFields.idempotencyKey: "buy-3-once"]
            let first = try await client.act(id, #"{"action": "buy"}"#, headers: headers)
            let second = try await client.act(id, #"{"action": "buy"}"#, headers: headers)
            #expect(first.status == .ok)
            #expect(first.json["outcome"] as? String == "purchased")
            #expect(second.text == first.text)
            #expect(try await h.query("SELECT count(*) FROM purchases").first?.int(0) == 1)
            let reused = try await client.act(id, #"{"action": "back"}"#, headers: headers)
            #expect(reused.status == .conflict)
        }
    }

    @Test("photos: list with pagination, get, purchased with a bearer token", arguments: TestStore.all)
    func photos(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let page = try await client.get("/v1/photos?limit=2")
            let photos = try #require(page.json["photos"] as? [[String: Any]])
            #expect(photos.map { $0["id"] as? Int } == [1, 2])
            #expect(photos[0]["priceCents"] as? Int == 250)
            #expect(photos[0]["purchased"] == nil)
            #expect(page.json["nextAfter"] as? Int == 2)
            let last = try await client.get("/v1/photos?after=4&limit=2")
            #expect((last.json["photos"] as? [Any])?.count == 1)
            #expect(last.json["nextAfter"] == nil)
            #expect(try await client.get("/v1/photos?limit=0").errorCode == "bad_request")

            let signIn = try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse"}"#)
            #expect(signIn.status == .ok)
            let token = try #require(signIn.json["token"] as? String)
            let bearer: HTTPFields = [.authorization: "Bearer \(token)"]
            let one = try await client.get("/v1/photos/2", headers: bearer)
            #expect(one.json["purchased"] as? Bool == false)
            #expect(one.json["title"] as? String == "Harbour in the rain")
            #expect(try await client.get("/v1/photos/99").status == .notFound)
            #expect(try await client.get("/v1/photos/abc").status == .notFound)
            #expect(try await client.get("/v1/photos/1", headers: [.authorization: "Bearer nope"]).status == .unauthorized)
            #expect(try await client.get("/v1/photos/1", headers: [.authorization: "Basic eA=="]).errorCode == "unauthorized")
        }
    }

    @Test("auth: sign-in, sign-out, me/purchases; wrong password 401; limits 429, audited", arguments: TestStore.all)
    func auth(store: TestStore) async throws {
        let h = try await ServerHarness.make(store) { $0.signInMaxAttempts = 3 }
        defer { h.close() }
        try await h.test { client in
            #expect(try await client.get("/v1/me/purchases").status == .unauthorized)
            let signIn = try await client.post("/v1/auth/sign-in", #"{"username": "bob", "password": "correct horse"}"#)
            let token = try #require(signIn.json["token"] as? String, "\(signIn.status): \(signIn.json)")
            #expect((signIn.json["user"] as? [String: Any])?["username"] as? String == "bob")
            let bearer: HTTPFields = [.authorization: "Bearer \(token)"]
            let purchases = try await client.get("/v1/me/purchases", headers: bearer)
            #expect(purchases.json["purchases"] as? [Any] != nil)
            let out = try await client.execute(uri: "/v1/auth/sign-out", method: .post, headers: bearer)
            #expect(out.status == .ok)
            #expect(try await client.get("/v1/me/purchases", headers: bearer).status == .unauthorized)

            for _ in 0..<3 {
                let wrong = try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "wrong password"}"#)
                #expect(wrong.status == .unauthorized)
                #expect(wrong.errorCode == "invalid_credentials")
            }
            let limited = try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse"}"#)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "too_many_attempts")
            #expect(try await client.post("/v1/auth/sign-in", #"{"username": "bob", "password": "correct horse"}"#).status == .ok)
            let unknown = try await client.post("/v1/auth/sign-in", #"{"username": "nobody", "password": "whatever12"}"#)
            #expect(unknown.errorCode == "invalid_credentials")

            // The same limit applies to sign-in inside a session. Its refusal is the second in
            // this limit's window: answered 429 and counted, with no audit row, and the session
            // stays as it was.
            let id = try await client.newSession()
            let onSignIn = try await client.act(id, #"{"action": "signIn"}"#)
            let inSession = try await client.act(id, #"{"action": "submit", "username": "alice", "password": "correct horse"}"#)
            #expect(inSession.status == .tooManyRequests)
            #expect(inSession.headers[.retryAfter] != nil)
            let signInVersion = try #require((onSignIn.json["session"] as? [String: Any])?["version"] as? Int)
            #expect(try await client.get("/v1/sessions/\(id)").json["version"] as? Int == signInVersion)
            let reasons = try await h.query("SELECT \(h.jsonText("detail", "reason")) FROM audit_trail WHERE step = 'auth.signInFailed' AND \(h.jsonText("detail", "reason")) IS NOT NULL")
            #expect(reasons.count == 1)
        }
    }

    @Test("SQL-looking strings in every text field and a million-character username change nothing and leak nothing", arguments: TestStore.all)
    func hostileStrings(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        let sqlish = #"x'); DROP TABLE audit_events; --"#
        try await h.test { client in
            let id = try await client.newSession()
            _ = try await client.act(id, #"{"action": "signIn"}"#)
            let escaped = sqlish.replacingOccurrences(of: "\\", with: "\\\\")
            let injected = try await client.act(id, #"{"action": "submit", "username": "\#(escaped)", "password": "\#(escaped)"}"#)
            #expect(injected.status == .unauthorized)
            #expect(injected.errorCode == "invalid_credentials")
            let signIn = try await client.post("/v1/auth/sign-in", #"{"username": "\#(escaped)", "password": "\#(escaped)"}"#)
            #expect(signIn.errorCode == "invalid_credentials")
            let huge = try await client.post("/v1/auth/sign-in", #"{"username": ""# + String(repeating: "u", count: 1_000_000) + #"", "password": "x"}"#)
            #expect(huge.status == .contentTooLarge)
            #expect(huge.errorCode == "payload_too_large")
            #expect(try await client.get("/v1/photos/1%27%20OR%201=1").status == .notFound)
            #expect(try await client.get("/v1/sessions/\(id)/events?after=1%20OR%201=1").errorCode == "bad_request")
            #expect(try await client.get("/v1/sessions/\(id)").status == .ok)
        }
        #expect(try await h.query("SELECT count(*) FROM audit_events").first?.int(0) ?? 0 > 0)
        // The attempted name is not a well-formed username, so it is not recorded anywhere.
        let stored = try await h.query("SELECT count(*) FROM audit_events WHERE detail LIKE '%DROP TABLE%' OR username LIKE '%DROP TABLE%'").first?.int(0)
        #expect(stored == 0)
    }

    @Test("a failed sign-in inside a session is 401 invalid_credentials and stays on signIn", arguments: TestStore.all)
    func sessionSignInFailure(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let id = try await client.newSession()
            _ = try await client.act(id, #"{"action": "signIn"}"#)
            let failed = try await client.act(id, #"{"action": "submit", "username": "alice", "password": "nope nope"}"#)
            #expect(failed.status == .unauthorized)
            #expect(failed.errorCode == "invalid_credentials")
            #expect(topScreen(try await client.get("/v1/sessions/\(id)").json) == "signIn")
            let missing = try await client.act(id, #"{"action": "submit", "username": "alice"}"#)
            #expect(missing.status == .badRequest)
        }
    }

    @Test("a retried sign-in (same Idempotency-Key) gets its first answer, is not counted again, and is never 429", arguments: TestStore.all)
    func retriedSignInIsNotLimited(store: TestStore) async throws {
        let h = try await ServerHarness.make(store) { $0.signInMaxAttempts = 2 }
        defer { h.close() }
        try await h.test { client in
            let id = try await client.newSession()
            _ = try await client.act(id, #"{"action": "signIn"}"#)
            let wrong = #"{"action": "submit", "username": "alice", "password": "wrong horse"}"#
            let key: HTTPFields = [.contentType: "application/json", .init("Idempotency-Key")!: "attempt-1"]
            for _ in 0..<4 {
                let retried = try await client.act(id, wrong, headers: key)
                #expect(retried.status == .unauthorized)
                #expect(retried.errorCode == "invalid_credentials")
            }
            // One failure counted, not four: the right password still gets through.
            let right = try await client.act(id, #"{"action": "submit", "username": "alice", "password": "correct horse"}"#)
            #expect(right.status == .ok)
            let failures = try await h.query("SELECT count(*) FROM audit_trail WHERE step = 'auth.signInFailed'")
            #expect(try failures.first?.int(0) == 1)
        }
    }

    @Test("a corrupt session state is a logged 500 internal that shows nothing of the decoder", arguments: TestStore.all)
    func corruptState(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let id = try await client.newSession()
            // As every writer of a session row does, the edit moves the version (photosd holds
            // the states it wrote by version, and decides on them without reading while the
            // version stays).
            try await h.execute("UPDATE sessions SET state = \(#"{"stacks": "not a list"}"#), version = version + 1 WHERE id = \(id)")
            for response in [try await client.get("/v1/sessions/\(id)"), try await client.act(id, #"{"action": "back"}"#)] {
                #expect(response.status == .internalServerError)
                #expect(response.errorCode == "internal")
                #expect(!response.text.contains("stacks") && !response.text.contains("Expected"), "\(response.text)")
            }
        }
    }

    @Test("errors from the HTTP layer keep their status, and a 5xx never says conflict")
    func httpLayerErrors() async throws {
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: ErrorMiddleware(storage: StorageHealth(logger: Logger(label: "test"))))
        router.get("/bad-gateway") { _, _ -> Response in throw HTTPError(.badGateway) }
        router.get("/unavailable") { _, _ -> Response in throw HTTPError(.serviceUnavailable) }
        router.get("/teapot") { _, _ -> Response in throw HTTPError(.init(code: 418)) }
        let app = Application(router: router)
        try await app.test(.router) { client in
            let badGateway = try await client.get("/bad-gateway")
            #expect(badGateway.status == .badGateway)
            #expect(badGateway.errorCode == "internal")
            let unavailable = try await client.get("/unavailable")
            #expect(unavailable.status == .serviceUnavailable)
            #expect(unavailable.errorCode == "unavailable")
            #expect(try await client.get("/teapot").errorCode == "bad_request")
        }
    }
}
