import DatabaseAccess
import Foundation
import HTTPTypes
import HummingbirdTesting
import PhotosCore
import PhotosStorage
@testable import PhotosServer
import PhotosTestSupport
import Testing
import PhotosModel

/// What a hostile client found: each test fails on the code before its fix.
@Suite("HTTP hardening")
struct HardeningTests {
    @Test("the reserved trails (api, operator) are not served; a client session's trail still is", arguments: TestStore.all)
    func reservedTrailsAreNotPublic(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            // Something in both reserved trails first: a token sign-in (api) and the users (operator).
            #expect(try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse"}"#).status == .ok)
            for reserved in ["api", "operator"] {
                // Whatever secret is sent: no session of that id has one.
                let anySecret: HTTPFields = [.authorization: "Session guessed"]
                let events = try await client.get("/v1/sessions/\(reserved)/events", headers: anySecret)
                #expect(events.status == .notFound, "\(reserved): \(events.text)")
                #expect(events.errorCode == "not_found")
                #expect(!events.text.contains("alice"))
                #expect(try await client.get("/v1/sessions/\(reserved)", headers: anySecret).status == .notFound)
                #expect(try await client.get("/v1/sessions/\(reserved)/events").status == .unauthorized)
            }
            let id = try await client.newSession()
            #expect(try await client.get("/v1/sessions/\(id)/events").status == .ok)
        }
    }

    @Test("a refused sign-in records whether the user exists, never the text typed for an unknown one", arguments: TestStore.all)
    func refusedSignInRecordsNoTypedText(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        // A password typed into the username field: a well-formed username that no user has.
        let typedPassword = "Tr0ub4dor-and-3"
        try await h.test { client in
            #expect(try await client.post("/v1/auth/sign-in", #"{"username": "\#(typedPassword)", "password": "whatever12"}"#).status == .unauthorized)
            #expect(try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "wrong horse"}"#).status == .unauthorized)
            let id = try await client.newSession()
            _ = try await client.act(id, #"{"action": "signIn"}"#)
            let failed = try await client.act(id, #"{"action": "submit", "username": "\#(typedPassword)", "password": "whatever12"}"#)
            #expect(failed.errorCode == "invalid_credentials")
        }
        let details = try await h.query("SELECT session_id, detail FROM audit_trail WHERE step = 'auth.signInFailed' ORDER BY session_id = 'api' DESC, seq")
            .map { "\(try $0.string(0) == "api" ? "api" : "session") \(try $0.string(1))" }
        #expect(details == [
            #"api {"unknownUser":true}"#,
            #"api {"attemptedUserId":1}"#,
            #"session {"unknownUser":true}"#,
        ])
        let leaks = try await h.query("SELECT count(*) FROM audit_trail WHERE detail LIKE \("%" + typedPassword + "%") OR username = \(typedPassword)")
        #expect(try leaks.first?.int(0) == 0)
    }

    @Test("a NUL in a password, or more than bcrypt's 72 bytes, is refused at sign-in (no password signs in by a prefix)", arguments: TestStore.all)
    func passwordsBcryptWouldCut(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        let password72 = String(repeating: "p", count: 72)
        let database = try await PhotosDatabase.open(h.configuration, migrate: false)
        _ = try await AuthService(database: database, bcryptCost: 4).createUser(username: "carol", password: password72, actor: testOperator)
        await database.close()
        try await h.test { client in
            // The right password still signs in.
            #expect(try await client.post("/v1/auth/sign-in", #"{"username": "carol", "password": "\#(password72)"}"#).status == .ok)
            // bcrypt would read only the first 72 bytes, or stop at the NUL: both would sign in.
            let longer = try await client.post("/v1/auth/sign-in", #"{"username": "carol", "password": "\#(password72)anything"}"#)
            #expect(longer.status == .badRequest, "\(longer.text)")
            #expect(longer.text.contains("72 bytes"))
            let withNUL = try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse\u0000junk"}"#)
            #expect(withNUL.status == .badRequest, "\(withNUL.text)")
            #expect(withNUL.text.contains("NUL"))

            let id = try await client.newSession()
            _ = try await client.act(id, #"{"action": "signIn"}"#)
            let submitted = try await client.act(id, #"{"action": "submit", "username": "carol", "password": "\#(password72)x"}"#)
            #expect(submitted.errorCode == "bad_request")
            let session = try await client.get("/v1/sessions/\(id)")
            #expect(session.json["user"] is NSNull)
            #expect(session.json["version"] as? Int == 2)
        }
        // Nothing was issued for the refused attempts: one token, the right password's.
        #expect(try await h.query("SELECT count(*) FROM tokens").first?.int(0) == 1)
    }

    @Test("new passwords: a NUL or more than 72 bytes is refused by createUser")
    func newPasswords() async throws {
        #expect(throws: PhotosError.self) { try AuthService.validate(password: "abcd\u{0}efgh") }
        #expect(throws: PhotosError.self) { try AuthService.validate(password: String(repeating: "p", count: 73)) }
        #expect(throws: PhotosError.self) { try AuthService.validate(password: String(repeating: "é", count: 37)) }  // 74 bytes
        try AuthService.validate(password: String(repeating: "p", count: 72))
        try AuthService.validate(password: "correct horse")
    }

    @Test("a body that is not application/json, or has no Content-Type, is 415", arguments: TestStore.all)
    func unsupportedMediaType(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let body = #"{"username": "alice", "password": "correct horse"}"#
            for contentType in ["application/jsonx", "text/plain", "application/json-patch+json"] {
                let refused = try await client.post("/v1/auth/sign-in", body, headers: [.contentType: contentType])
                #expect(refused.status == .unsupportedMediaType, "\(contentType)")
                #expect(refused.errorCode == "unsupported_media_type")
            }
            let none = try await client.post("/v1/auth/sign-in", body, headers: [:])
            #expect(none.status == .unsupportedMediaType)
            for contentType in ["application/json", "Application/JSON; charset=utf-8"] {
                #expect(try await client.post("/v1/auth/sign-in", body, headers: [.contentType: contentType]).status == .ok, "\(contentType)")
            }
            // No body at all needs no Content-Type.
            #expect(try await client.createSession().status == .created)
        }
    }

    @Test("a page exactly full has no nextAfter (no cursor to an empty page)", arguments: TestStore.all)
    func pageExactlyFull(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            // Five demo photos.
            let all = try await client.get("/v1/photos?limit=5")
            #expect((all.json["photos"] as? [Any])?.count == 5)
            #expect(all.json["nextAfter"] == nil, "\(all.text)")
            let tail = try await client.get("/v1/photos?after=3&limit=2")
            #expect((tail.json["photos"] as? [Any])?.count == 2)
            #expect(tail.json["nextAfter"] == nil)
            let more = try await client.get("/v1/photos?limit=4")
            #expect(more.json["nextAfter"] as? Int == 4)
        }
    }

    @Test("a key twice in one JSON object is refused with 400 (parsers disagree on which one counts)", arguments: TestStore.all)
    func duplicateKeys(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let twice = try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse", "username": "bob"}"#)
            #expect(twice.status == .badRequest, "\(twice.text)")
            #expect(twice.text.contains("appears twice"))
            let escaped = try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse", "user\u006eame": "bob"}"#)
            #expect(escaped.status == .badRequest, "\(escaped.text)")
            let id = try await client.newSession()
            let action = try await client.act(id, #"{"action": "selectPhoto", "photoId": 1, "action": "buyPhoto"}"#)
            #expect(action.status == .badRequest)
            #expect(try await client.get("/v1/sessions/\(id)").json["version"] as? Int == 1)
            // The same key in two different objects is no duplicate.
            let nested = try await client.post("/v1/sessions", #"{"layout": "stack", "a": {"k": 1}, "b": {"k": [{"k": 2}, {"k": 3}]}}"#)
            #expect(nested.status == .created, "\(nested.text)")
            #expect(try await client.post("/v1/auth/sign-in", #"{"username": "alice", "password": "correct horse"}"#).status == .ok)
        }
    }

    @Test("a relative audit signing key path is the database directory's, and photosd refuses a missing or other key while checkpoints exist")
    func signingKeyBesideTheDatabase() async throws {
        let home = try TemporaryDirectory()
        defer { home.remove() }
        let elsewhere = try TemporaryDirectory()
        defer { elsewhere.remove() }
        let admin = Daemon.binDirectory + "/photos-admin"
        try await migrateDefaultDatabase(in: home.path)
        let database = home.file("data/photos.db")
        let (written, output) = try await runTool(admin, ["audit", "checkpoint", "--db", "data/photos.db"], in: home.path)
        #expect(written == 0, "\(output)")
        #expect(FileManager.default.fileExists(atPath: home.file("data/audit-signing.key")))
        let publicKey = try await runTool(admin, ["audit", "key", "--db", "data/photos.db"], in: home.path).1.trimmingCharacters(in: .whitespacesAndNewlines)

        // Started from another directory, photosd signs with the key beside the database …
        let daemon = try await Daemon(["--db", database], in: elsewhere.path)
        _ = try RawSocket(port: daemon.port).exchange("POST /v1/sessions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(daemon.stop() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "a key (or anything) made in the working directory")
        // … and its shutdown checkpoint verifies, from anywhere.
        let (verified, verifyOutput) = try await runTool(admin, ["audit", "verify", "--db", database], in: elsewhere.path)
        #expect(verified == 0, "\(verifyOutput)")
        #expect(verifyOutput.contains("audit trail intact"), "\(verifyOutput)")

        // A key path that names no file: refused (not a new key), saying which key is needed.
        // (Under `timeout`: a photosd that starts anyway would serve until killed.)
        let missing = try await runProcess("/usr/bin/timeout", ["20", Daemon.binDirectory + "/photosd", "--db", database], in: elsewhere.path,
                                     environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": elsewhere.file("new.key"), "PHOTOSD_SERVER_PORT": "0", "PHOTOSD_CONSOLE_PORT": "0", "PHOTOSD_METRICS_PORT": "0"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("public key \(publicKey)"), "\(missing.output)")
        #expect(!FileManager.default.fileExists(atPath: elsewhere.file("new.key")))
        // Another existing key: refused too.
        try await migrateDefaultDatabase(in: elsewhere.path)
        _ = try await runTool(admin, ["audit", "key", "--db", "data/photos.db"], in: elsewhere.path)
        let other = try await runProcess("/usr/bin/timeout", ["20", Daemon.binDirectory + "/photosd", "--db", database], in: elsewhere.path,
                                   environment: ["PHOTOSD_AUDIT_SIGNING_KEY_PATH": elsewhere.file("data/audit-signing.key"), "PHOTOSD_SERVER_PORT": "0", "PHOTOSD_CONSOLE_PORT": "0", "PHOTOSD_METRICS_PORT": "0"])
        #expect(other.status != 0)
        #expect(other.stderr.contains("did not sign"), "\(other.output)")
    }

    @Test("a keyed sign-in retry carries its token only when its password checks again; its navigation is replayed either way", arguments: TestStore.all)
    func keyedSignInRetryNeedsThePassword(store: TestStore) async throws {
        let h = try await ServerHarness.make(store)
        defer { h.close() }
        try await h.test { client in
            let id = try await client.newSession()
            _ = try await client.act(id, #"{"action": "signIn"}"#)
            let key: HTTPFields = [.contentType: "application/json", .init("Idempotency-Key")!: "login-1"]
            let first = try await client.act(id, #"{"action": "submit", "username": "alice", "password": "correct horse"}"#, headers: key)
            #expect(first.status == .ok)
            let token = try #require(first.json["token"] as? String)
            let steps = try await h.query("SELECT count(*) FROM audit_trail").first?.int(0)

            let wrong = try await client.act(id, #"{"action": "submit", "username": "alice", "password": "not the password!"}"#, headers: key)
            #expect(wrong.status == .ok, "the navigation is replayed: \(wrong.text)")
            #expect(wrong.json["token"] == nil, "the token went to a retry without the password")
            #expect(!wrong.text.contains(token))
            #expect(topScreen(wrong.json) == topScreen(first.json))

            let right = try await client.act(id, #"{"action": "submit", "username": "alice", "password": "correct horse"}"#, headers: key)
            #expect(right.json["token"] as? String == token)
            #expect(try await h.query("SELECT count(*) FROM audit_trail").first?.int(0) == steps, "a retry wrote a step")
        }
    }
}
