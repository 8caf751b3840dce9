import DatabaseAccess
import Foundation
import Hummingbird
import HummingbirdTesting
import PhotosTestSupport
import Testing

/// The HTTP side of tabs and deep links: the body of `POST /v1/sessions`, the new actions, and
/// their errors (nothing created or changed by a refused request).
@Suite("Tabs and links over HTTP")
struct NavigationRoutesTests {
    static let json: HTTPFields = [.contentType: "application/json"]

    @Test("POST /v1/sessions takes a layout and a link; the session object carries layout and tabs")
    func createWithBody() async throws {
        let h = try await ServerHarness.make()
        defer { h.close() }
        try await h.test { client in
            let plain = try await client.createSession()
            #expect(plain.status == .created)
            #expect(plain.json["layout"] as? String == "stack")
            #expect(plain.json["tabs"] is NSNull)

            let tabs = try await client.post("/v1/sessions", #"{"layout": "tabs"}"#)
            #expect(tabs.status == .created)
            #expect(tabs.json["layout"] as? String == "tabs")
            let bar = try #require(tabs.json["tabs"] as? [String: Any])
            #expect(bar["selected"] as? String == "photos")
            let items = try #require(bar["items"] as? [[String: Any]])
            #expect(items.map { $0["tab"] as? String } == ["photos", "purchases"])
            let navigation = try #require(tabs.json["navigation"] as? [[String: Any]])
            #expect(navigation.first?["presentation"] as? String == "tab")
            #expect(navigation.first?["tab"] as? String == "photos")
            let tree = try #require(tabs.json["coordinators"] as? [String: Any])
            #expect((tree["children"] as? [[String: Any]])?.map { $0["kind"] as? String } == ["tab", "tab"])

            let linked = try await client.post("/v1/sessions", #"{"layout": "tabs", "link": "/photos/2/buy"}"#)
            #expect(linked.status == .created)
            let screens = (linked.json["navigation"] as? [[String: Any]])?.first?["screens"] as? [[String: Any]]
            #expect(screens?.map { $0["screen"] as? String } == ["photos", "photo", "signIn"])
            let stackLinked = try await client.post("/v1/sessions", #"{"link": "/photos/3"}"#)
            #expect(stackLinked.status == .created)
            #expect(stackLinked.json["layout"] as? String == "stack")
        }
    }

    @Test("bad bodies and links: 400 or 404 with the error body, and no session created")
    func createRefusals() async throws {
        let h = try await ServerHarness.make()
        defer { h.close() }
        try await h.test { client in
            let cases: [(String, HTTPResponse.Status)] = [
                (#"{"layout": "grid"}"#, .badRequest), (#"{"layout": 3}"#, .badRequest), (#"{"link": "/photos/x"}"#, .badRequest),
                (#"{"link": "/purchases"}"#, .badRequest), (#"{"link": 5}"#, .badRequest), (#"{"link": "/photos/999"}"#, .notFound),
                (#"{"layout": "tabs", "link": "/photos/999/buy"}"#, .notFound), ("[1]", .badRequest), ("{", .badRequest),
            ]
            for (body, status) in cases {
                let response = try await client.post("/v1/sessions", body)
                #expect(response.status == status, "\(body)")
                #expect(response.errorCode == (status == .notFound ? "not_found" : "bad_request"), "\(body)")
            }
            #expect(try await h.query("SELECT count(*) FROM sessions").first?.int(0) == 0)
        }
    }

    @Test("selectTab and openLink as actions; unknown tabs and bad links are 400 and change nothing")
    func actions() async throws {
        let h = try await ServerHarness.make()
        defer { h.close() }
        try await h.test { client in
            let id = try #require(try await client.post("/v1/sessions", #"{"layout": "tabs"}"#).json["id"] as? String)
            let switched = try await client.act(id, #"{"action": "selectTab", "tab": "purchases"}"#)
            #expect(switched.status == .ok)
            #expect(((switched.json["session"] as? [String: Any])?["tabs"] as? [String: Any])?["selected"] as? String == "purchases")
            let opened = try await client.act(id, #"{"action": "openLink", "link": "/photos/1"}"#)
            #expect(opened.status == .ok)
            #expect((opened.json["events"] as? [[String: Any]])?.first?["step"] as? String == "link.open")
            let version = (opened.json["session"] as? [String: Any])?["version"] as? Int
            for body in [#"{"action": "selectTab", "tab": "settings"}"#, #"{"action": "selectTab"}"#, #"{"action": "openLink"}"#,
                         #"{"action": "openLink", "link": "photos"}"#, #"{"action": "openLink", "link": 1}"#] {
                let refused = try await client.act(id, body)
                #expect(refused.status == .badRequest, "\(body)")
                #expect(refused.errorCode == "bad_request", "\(body)")
            }
            #expect(try await client.act(id, #"{"action": "openLink", "link": "/photos/404"}"#).status == .notFound)
            #expect(try await client.get("/v1/sessions/\(id)").json["version"] as? Int == version, "a refused request changed the session")
        }
    }
}
