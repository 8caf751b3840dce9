import PhotosClient
import PhotosClientTesting
import PhotosTestSupport
import Testing
import Foundation

/// `NavigationTestStore`: a walk the test states step by step passes; every way a step can
/// differ from what the test said — other commands, another outcome, a screen more, an error
/// expected that did not come — is a `Mismatch` that says what differs.
@Suite("PhotosClientTesting: NavigationTestStore")
@MainActor
struct NavigationTestStoreTests {
    static func store() async throws -> NavigationTestStore {
        try await NavigationTestStore(server: FakePhotosServer(users: ["alice": "wonderland"]))
    }

    @Test("a purchase stated step by step passes; a refusal and a change from outside are stated too")
    func walk() async throws {
        let store = try await NavigationTestStore(server: FakePhotosServer(users: ["alice": "wonderland"]))
        #expect(store.expected.stacks.map(\.screens) == [[Screen(.photos)]])
        try await store.send(.selectPhoto(2), [.push(Screen(.photo, photoId: 2, purchased: false))])
        try await store.send(.buy, [.push(Screen(.signIn))])
        try await store.send(.submit(username: "alice", password: "wonderland"), [.replaceTop(Screen(.buy, photoId: 2, purchased: false))], outcome: .signedIn)
        try await store.expectError(.selectPhoto(3), "not offered on buy") { if case .actionNotAvailable = $0 { true } else { false } }
        try await store.send(.buy, [.pop(1), .update(Screen(.photo, photoId: 2, purchased: true))], outcome: .purchased)
        // A change from outside: another device goes back; the app reads it.
        let tablet = store.server.driver()
        try await tablet.attach(sessionID: try #require(await store.model.driver.sessionID), secret: try #require(await store.model.driver.sessionSecret))
        _ = try await tablet.send(.back)
        try await store.refresh { $0.apply(.pop(1)) }
        #expect(store.model.state.stacks.map(\.screens) == [[Screen(.photos)]])
    }

    @Test("docs/client.md's NavigationTestStore lines are the walk's, as run above")
    func documented() throws {
        let shown = try DocBlocks.block("client-test-store-example", in: "docs/client.md")
        let source = try String(contentsOfFile: BuiltProducts.packageRoot + "/Tests/PhotosClientTests/NavigationTestStoreTests.swift", encoding: .utf8)
        let lines = source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for line in shown.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
            #expect(lines.contains(line), "not run by the walk: \(line)")
        }
    }

    @Test("each way a step can differ is a Mismatch that says what differs")
    func mismatches() async throws {
        let store = try await Self.store()
        // Other commands (the photo's values wrong).
        do {
            try await store.send(.selectPhoto(2), [.push(Screen(.photo, photoId: 2, purchased: true))])
            Issue.record("other commands passed")
        } catch let mismatch as NavigationTestStore.Mismatch {
            #expect(mismatch.step == "send(selectPhoto(2))")
            #expect(mismatch.differences.contains { $0.hasPrefix("commands [push photo 2]") }, "\(mismatch)")
            #expect(mismatch.differences.contains { $0.hasPrefix("stack 0 shows") }, "\(mismatch)")
        }
        // The next step starts from what the app shows: stated right, it passes.
        try await store.send(.buy, [.push(Screen(.signIn))])
        // Another outcome.
        do {
            try await store.send(.submit(username: "alice", password: "wonderland"), [.replaceTop(Screen(.buy, photoId: 2, purchased: false))], outcome: .purchased)
            Issue.record("another outcome passed")
        } catch let mismatch as NavigationTestStore.Mismatch {
            #expect(mismatch.differences == ["outcome signedIn, expected purchased"], "\(mismatch)")
        }
        // A screen the test did not say (exhaustive: an update that leaves one out fails).
        do {
            try await store.send(.back, [.pop(1)]) { $0.apply(.push(Screen(.terms))) }
            Issue.record("a screen more passed")
        } catch let mismatch as NavigationTestStore.Mismatch {
            #expect(mismatch.differences == ["stack 0 shows root [photos, photo 2], expected root [photos, photo 2, terms]"], "\(mismatch)")
        }
        // An error expected that did not come.
        do {
            try await store.expectError(.buy) { _ in true }
            Issue.record("a success passed as an error")
        } catch let mismatch as NavigationTestStore.Mismatch {
            #expect(mismatch.differences.first?.hasPrefix("succeeded") == true, "\(mismatch)")
        }
        // A failure where a step was expected.
        await store.server.refuseNext("act", with: .tooManyAttempts(retryAfter: 3))
        do {
            try await store.send(.back, [.pop(1)])
            Issue.record("a refused step passed")
        } catch let mismatch as NavigationTestStore.Mismatch {
            #expect(mismatch.description.hasPrefix("send(back): failed: "), "\(mismatch)")
        }
    }
}
