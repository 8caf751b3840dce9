import DatabaseAccess
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PhotosModel
@testable import PhotosServer
import PhotosTestSupport
import Synchronization
import Testing

/// A session's credential is its secret, not its id (design §4 from wave 4): the id travels in
/// URLs, which proxies and load balancers log.
@Suite("Session secrets")
struct SessionSecretTests {
    static let selectPhoto = #"{"action": "selectPhoto", "photoId": 1}"#

    @Test("creating a session returns its secret once; only its SHA-256 is stored", arguments: TestStore.all)
    func returnedOnceStoredHashed(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let created = try await client.createSession()
            #expect(created.status == .created)
            let id = try #require(created.json["id"] as? String)
            let secret = try #require(created.json["sessionSecret"] as? String)
            #expect(secret.utf8.count == 43, "32 random bytes, base64url")
            #expect(secret != id)
            let rows = try await h.query("SELECT secret_hash, state FROM sessions WHERE id = \(id)")
            #expect(try rows.first?.string(0) == SecureToken.sha256Hex(secret))
            #expect(try !(rows.first?.string(1) ?? "").contains(secret))
            // Never again: not in the session object, an action's answer or the trail.
            let session = try await client.get("/v1/sessions/\(id)")
            #expect(session.status == .ok)
            #expect(session.json["sessionSecret"] == nil)
            #expect(!session.text.contains(secret))
            let acted = try await client.act(id, Self.selectPhoto)
            #expect(acted.status == .ok)
            #expect(!acted.text.contains(secret))
            #expect(!(try await client.get("/v1/sessions/\(id)/events").text).contains(secret))
            let trail = try await h.query("SELECT count(*) FROM audit_events WHERE detail LIKE \("%" + secret + "%")")
            #expect(try trail.first?.int(0) == 0)
        }
    }

    @Test("the id alone, another session's secret, or a bearer token is answered 401, and changes nothing", arguments: TestStore.all)
    func idAloneRefused(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let id = try await client.newSession()
            let other = try await client.newSession()
            let othersSecret = try #require(SessionSecretBook.secret(of: other))
            let token = try #require(try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse"}"#).json["token"] as? String)
            let refusals: [(String, HTTPFields)] = [
                ("no header", [.contentType: "application/json", .authorization: ""]),
                ("another session's secret", [.contentType: "application/json", .authorization: "Session \(othersSecret)"]),
                ("a bearer token", [.contentType: "application/json", .authorization: "Bearer \(token)"]),
                ("a secret with its last character changed", [.contentType: "application/json", .authorization: "Session \(String(othersSecret.dropLast()))A"]),
            ]
            for (what, headers) in refusals {
                for (method, path) in [
                    (HTTPRequest.Method.get, "/v1/sessions/\(id)"), (.get, "/v1/sessions/\(id)/events"), (.post, "/v1/sessions/\(id)/actions"),
                    (.get, "/v1/sessions/\(id)/changes?after=0&wait=0"),
                ] {
                    var headers = headers
                    if headers[.authorization] == "" { headers[.authorization] = nil }
                    let answer = try await client.execute(uri: path, method: method, headers: headers, body: method == .post ? ByteBuffer(string: Self.selectPhoto) : nil)
                    #expect(answer.status == .unauthorized, "\(what), \(method) \(path): \(answer.text)")
                    #expect(answer.errorCode == "unauthorized")
                    #expect(!answer.text.contains("\"version\""), "\(what): the session was shown")
                }
            }
            let session = try await client.get("/v1/sessions/\(id)")
            #expect(session.json["version"] as? Int == 1, "a refused action moved the session: \(session.text)")
            #expect(topScreen(session.json) == "photos")
            let trail = try await h.query("SELECT count(*) FROM audit_events WHERE session_id = \(id) AND step <> 'session.start' AND step NOT LIKE 'screen.%' AND step <> 'coordinator.start'")
            #expect(try trail.first?.int(0) == 0, "a refused request wrote to the trail")
        }
    }

    @Test("the secret is checked from the database by a fresh process; an unknown id is 401 as a wrong secret is; a session from before secrets is 401", arguments: TestStore.all)
    func freshProcessAndOldSessions(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        let created = Mutex("")
        try await h.test { client in
            let id = try await client.newSession()
            created.withLock { $0 = id }
        }
        let id = created.withLock { $0 }
        // A new application: nothing cached, the hash is read.
        try await h.test { client in
            #expect(try await client.act(id, Self.selectPhoto).status == .ok)
            let wrong = try await client.get("/v1/sessions/\(id)", headers: [.authorization: "Session nope"])
            #expect(wrong.status == .unauthorized)
            // An unknown id: the very answer a wrong secret gets, so that no answer tells which ids exist.
            let unknown = try await client.get("/v1/sessions/0000000000000000000000000000000000", headers: [.authorization: "Session nope"])
            #expect(unknown.status == .unauthorized && unknown.text == wrong.text, "\(unknown.text) against \(wrong.text)")
        }
        try await h.execute("UPDATE sessions SET secret_hash = NULL WHERE id = \(id)")
        try await h.test { client in
            let old = try await client.get("/v1/sessions/\(id)")
            #expect(old.status == .unauthorized)
            #expect(old.text.contains("start a new session"), "\(old.text)")
        }
    }
}
