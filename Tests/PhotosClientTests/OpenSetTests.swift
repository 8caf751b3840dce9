import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import PhotosClient
import PhotosTestSupport
import Testing

/// A shipped app meets a newer server: screens, actions, outcomes, error codes, coordinators and
/// fields it does not know decode, are never offered, and the next action works. The API
/// version travels both ways. And what the user already did on screen is not done twice.
@Suite("PhotosClient: ready for the next server")
struct OpenSetTests {
    /// photosd's real answers, rewritten as a newer server might send them: an action `share`
    /// offered everywhere, a field `badge` on the session and its screens, a coordinator kind
    /// `share`, and after `selectPhoto` a screen `share` pushed over the photo with the outcome
    /// `favorited`.
    struct NewerServer: ClientTransport {
        let real = URLSessionTransport()
        /// Whether the `share` screen was shown already (it is shown once).
        let shared = Recorder()

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            let (response, answer) = try await real.send(request, body: body, baseURL: baseURL, operationID: operationID)
            if response.status.code == 409, let answer {
                // An error code of the next server's.
                let text = String(decoding: try await Data(collecting: answer, upTo: 1 << 20), as: UTF8.self)
                let rewritten = Data(text.replacingOccurrences(of: "action_not_available", with: "flow_paused").utf8)
                var headers = response
                headers.headerFields[.contentLength] = String(rewritten.count)
                return (headers, HTTPBody(rewritten))
            }
            guard ["createSession", "getSession", "act"].contains(operationID), response.status.kind == .successful, let answer else {
                return (response, answer)
            }
            let data = try await Data(collecting: answer, upTo: 1 << 20)
            guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return (response, HTTPBody(data)) }
            let pushShare = operationID == "act" && (object["session"] as? [String: Any])?["version"] != nil
                && String(decoding: data, as: UTF8.self).contains(#""outcome":"navigated""#)
                && Self.topName(object["session"]) == "photo" && shared.values.isEmpty
            if pushShare { shared.add("shown") }
            if object["session"] != nil {
                object["session"] = Self.newer(object["session"] as? [String: Any] ?? [:], pushShare: pushShare)
                if pushShare { object["outcome"] = "favorited" }
            } else {
                object = Self.newer(object, pushShare: false)
            }
            let rewritten = try JSONSerialization.data(withJSONObject: object)
            var headers = response
            headers.headerFields[.contentLength] = String(rewritten.count)
            return (headers, HTTPBody(rewritten))
        }

        static func topName(_ session: Any?) -> String? {
            ((session as? [String: Any])?["top"] as? [String: Any])?["screen"] as? String
        }

        static func newer(_ session: [String: Any], pushShare: Bool) -> [String: Any] {
            var session = session
            session["badge"] = ["count": 3]
            var top = session["top"] as? [String: Any] ?? [:]
            top["actions"] = (top["actions"] as? [String] ?? []) + ["share"]
            var navigation = session["navigation"] as? [[String: Any]] ?? []
            if pushShare, var stack = navigation.last {
                let photoId = ((stack["screens"] as? [[String: Any]])?.last?["photoId"]) ?? 0
                stack["screens"] = (stack["screens"] as? [[String: Any]] ?? []) + [["screen": "share", "photoId": photoId, "badge": 1]]
                navigation[navigation.count - 1] = stack
                top["screen"] = "share"
            }
            session["navigation"] = navigation
            session["top"] = top
            if var tree = session["coordinators"] as? [String: Any] {
                tree["children"] = (tree["children"] as? [Any] ?? []) + [["kind": "share", "id": "s1", "presentation": "popover", "children": []]]
                session["coordinators"] = tree
            }
            return session
        }
    }

    @Test("a newer server's screen, action, outcome, coordinator and field: no error, and the next action works")
    func newerServer() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let driver = NavigationDriver(serverURL: server.url, transport: NewerServer())
        let started = try await driver.start()
        #expect(started.actions.allSatisfy { $0.isKnown }, "an unknown action is never offered: \(started.actions)")
        #expect(started.generated.top.actions.contains { $0.value2 == "share" } == true, "the answer did carry it")
        #expect(started.actions.contains(.selectPhoto))

        let step = try await driver.send(.selectPhoto(2))
        #expect(step.outcome == .unknown("favorited"))
        // The unknown screen keeps the field this client does not know (for its fallback).
        let share = Screen(.unknown("share"), photoId: 2, otherFields: try OpenAPIObjectContainer(unvalidatedValue: ["badge": 1]))
        #expect(step.commands == [.push(Screen(.photo, photoId: 2, purchased: false)), .push(share)])
        #expect(step.session.top?.name == .unknown("share"))
        #expect(step.session.actions.allSatisfy { $0.isKnown })
        #expect("\(step.commands[1])" == "push unknown(share) 2")

        // The next action is the real server's answer: the unknown screen gives way.
        let next = try await driver.send(.buy)
        #expect(next.commands == [.replaceTop(Screen(.signIn))])
        #expect(await driver.shown.stacks.map(\.screens) == [[Screen(.photos), Screen(.photo, photoId: 2, purchased: false), Screen(.signIn)]])
        let back = try await driver.send(.back)
        #expect(back.outcome == .navigated)

        // An error code the client does not know: a server error with that code, not a
        // failure to read the answer; and the session goes on.
        do {
            _ = try await driver.send(.showTerms)
            Issue.record("showTerms was accepted on a photo")
        } catch {
            guard case .server(409, "flow_paused", _) = error else { Issue.record("\(error)"); return }
        }
        #expect(try await driver.send(.back).commands == [.pop(1)])
    }


    @Test("Photos-API-Version: sent by the driver, answered on every /v1 answer, a newer client answered in 1, a bad one 400")
    func apiVersion() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        func get(_ path: String, version: String?) async throws -> (Int, String?, String) {
            var request = URLRequest(url: server.url.appending(path: path))
            if let version { request.setValue(version, forHTTPHeaderField: "Photos-API-Version") }
            let (data, response) = try await URLSession.shared.data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            return (http.statusCode, http.value(forHTTPHeaderField: "Photos-API-Version"), String(decoding: data, as: UTF8.self))
        }
        #expect(try await get("v1/photos", version: nil).1 == "1")
        #expect(try await get("v1/photos", version: "1").1 == "1")
        #expect(try await get("v1/photos", version: "7").1 == "1", "a newer client is answered in the server's version")
        #expect(try await get("v1/sessions/nope", version: "1").1 == "1", "errors carry it too")
        let refused = try await get("v1/photos", version: "two")
        #expect(refused.0 == 400 && refused.1 == "1" && refused.2.contains("Photos-API-Version"))
        #expect(try await get("v1/photos", version: "0").0 == 400)
        #expect(try await get("healthz", version: "two").0 == 200, "only /v1 reads it")

        // The driver sends it: a transport that records the request.
        struct Recording: ClientTransport {
            let seen: Recorder
            let real = URLSessionTransport()
            func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
                seen.add(request.headerFields[APIVersionMiddleware.header])
                return try await real.send(request, body: body, baseURL: baseURL, operationID: operationID)
            }
        }
        let recorder = Recorder()
        let driver = NavigationDriver(serverURL: server.url, transport: Recording(seen: recorder))
        try await driver.start()
        _ = try await driver.send(.selectPhoto(1))
        #expect(recorder.values == ["1", "1"])
    }

    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [String?] = []
        func add(_ value: String?) { lock.withLock { seen.append(value) } }
        var values: [String?] { lock.withLock { seen } }
    }

    @Test("what the user did on screen (swipe-back, swipe-down, a tab tapped) is not sent back as a command")
    func userGestures() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let driver = server.driver()
        try await driver.start()
        _ = try await driver.send(.selectPhoto(2))
        // Swipe-back: the system popped; the server's answer matches; no pop comes back.
        #expect(try await driver.userDid(.back).commands == [])
        #expect(await driver.shown.root == [Screen(.photos)])
        // Swipe-down on a sheet: dismissed already.
        _ = try await driver.send(.buyPhoto(3))
        #expect(await driver.shown.modals.count == 1)
        #expect(try await driver.userDid(.dismiss).commands == [])
        #expect(await driver.shown.stacks.count == 1)
        // Refused: the screen the user swiped away comes back through refresh().
        _ = try await driver.send(.selectPhoto(1))
        _ = try await driver.send(.buy)  // sign-in over the photo, in the buy flow
        do {
            _ = try await driver.userDid(.dismiss)  // a stack session's pushed sign-in has no dismiss
            Issue.record("dismiss was accepted on a pushed screen")
        } catch {
            guard case .actionNotAvailable = error else { Issue.record("\(error)"); return }
        }
        #expect(try await driver.refresh() == [])  // nothing was shown differently: dismiss was a no-op here
        // A tab tapped: the tab bar switched; no selectTab comes back.
        let tabs = server.driver()
        try await tabs.start(layout: .tabs)
        #expect(try await tabs.userDid(.selectTab(.purchases)).commands == [])
        #expect(await tabs.shown.selectedTab == .purchases)
    }
}
