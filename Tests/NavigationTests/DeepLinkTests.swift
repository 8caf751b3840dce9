import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

/// Deep links, one test per rule of the design's contract section.
@Suite("Deep links")
struct DeepLinkTests {
    @Test("every link from a fresh session, in both layouts: built as if tapped, after one link.open row")
    func fromFreshSession() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let expected: [(SessionLayout, DeepLink, String, String, String)] = [
            (.stack, .photos, "[photos]", "app", "-"),
            (.stack, .photo(2), "[photos, photo]", "app", "-"),
            (.stack, .buy(2), "[photos, photo, signIn]", "app(buy)", "-"),
            (.tabs, .photos, "[photos]", "app(tab-photos, tab-purchases)", "photos*: [photos] · purchases: [purchases]"),
            (.tabs, .photo(2), "[photos, photo]", "app(tab-photos, tab-purchases)", "photos*: [photos, photo] · purchases: [purchases]"),
            (.tabs, .buy(2), "[photos, photo, signIn]", "app(tab-photos(buy), tab-purchases)", "photos*: [photos, photo, signIn] · purchases: [purchases]"),
            (.tabs, .purchases, "[purchases]", "app(tab-photos, tab-purchases)", "photos: [photos] · purchases*: [purchases]"),
        ]
        for (layout, link, stack, coordinators, bar) in expected {
            let created = try await h.coordinator.createSession(layout: layout, link: link)
            expectHandWrittenJSON(created)
            #expect(stacks(created.session) == stack, "\(layout) \(link)")
            #expect(tree(created.session) == coordinators, "\(layout) \(link)")
            #expect(tabBar(created.session) == bar, "\(layout) \(link)")
            #expect(created.session.version == 1)
            let linkRows = created.events.filter { $0.step == "link.open" }
            #expect(linkRows.map(\.detail) == [#"{"link":"\#(link)"}"#])
            try await h.checkInvariants(created.session.id)
        }
        // The steps after link.open are those of the taps: the same rows as tapping there.
        let linked = try await h.coordinator.createSession(link: .buy(3))
        let afterLink = steps(Array(linked.events.drop { $0.step != "link.open" }.dropFirst()))
        let tapped = try await h.newSession()
        let selected = try await h.act(tapped, .selectPhoto, photoId: 3)
        let bought = try await h.act(tapped, .buy)
        #expect(afterLink == steps((selected.events + bought.events).filter { $0.step != "action" }))
        #expect(afterLink == [#"screen.push app photo {"photoId":3}"#, #"coordinator.start app/buy - {"kind":"buy","photoId":3,"presentation":"push"}"#, #"screen.push app/buy signIn {}"#])
        // Signed in, /photos/{id}/buy lands on buy.
        let signedIn = try await h.newSession()
        try await h.signIn(signedIn)
        let toBuy = try await h.act(signedIn, .openLink, link: .buy(1))
        #expect(stacks(toBuy.session) == "[photos, photo, buy]")
        #expect(toBuy.events.first?.step == "link.open")
        #expect(!toBuy.events.contains { $0.step == "action" })
    }

    @Test("openLink from a deep stack with a modal flow and a terms sheet open: unwinds innermost first (reason link), keeps the user signed in")
    func fromDeepStack() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        let deep = try await h.act(id, .showTerms)
        #expect(stacks(deep.session) == "[photos, photo, buy] | [terms]")
        #expect(tree(deep.session) == "app(buy(terms))")
        #expect(actions(deep.session) == ["cancel", "dismiss"], "openLink is listed on no screen")
        let opened = try await h.act(id, .openLink, link: .photo(3))
        #expect(stacks(opened.session) == "[photos, photo]")
        #expect(opened.session.navigation.first?.screens.last?.photoId == 3)
        #expect(tree(opened.session) == "app")
        #expect(opened.session.user?.username == "alice")
        #expect(steps(opened.events) == [
            #"link.open app - {"link":"/photos/3"}"#,
            #"screen.dismiss app/buy/terms terms {}"#,
            #"coordinator.finish app/buy/terms - {"reason":"link"}"#,
            #"screen.pop app/buy buy {"photoId":1}"#,
            #"coordinator.finish app/buy - {"reason":"link"}"#,
            #"screen.pop app photo {"photoId":1}"#,
            #"screen.push app photo {"photoId":3}"#,
        ])

        // A vertical flow's modal stack with its own terms sheet over it, and the app's sign-in.
        let modal = try await h.newSession()
        try await h.act(modal, .buyPhoto, photoId: 2)
        try await h.act(modal, .submit)
        let sheets = try await h.act(modal, .showTerms)
        #expect(stacks(sheets.session) == "[photos] | [buy] | [terms]")
        let home = try await h.act(modal, .openLink, link: .photos)
        #expect(stacks(home.session) == "[photos]")
        #expect(tree(home.session) == "app")
        #expect(home.events.filter { $0.step == "coordinator.finish" }.map(\.detail) == [#"{"reason":"link"}"#, #"{"reason":"link"}"#])
        #expect(home.events.filter { $0.step == "screen.dismiss" }.count == 2)
        #expect(home.session.user != nil)
    }

    @Test("openLink on a tabs session unwinds every tab, each on its own stack, and selects the link's tab")
    func tabsUnwindEveryTab() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        try await h.signIn(id)
        try await h.act(id, .buyPhoto, photoId: 1)
        try await h.act(id, .buy)  // photo 1 owned now
        try await h.act(id, .selectPhoto, photoId: 2)
        try await h.act(id, .buy)  // a purchase flow left running on the photos tab
        try await h.act(id, .selectTab, tab: .purchases)
        try await h.act(id, .selectPhoto, photoId: 1)
        let deep = try await h.act(id, .buy)  // and one on the purchases tab
        #expect(tabBar(deep.session) == "photos: [photos, photo, buy] · purchases*: [purchases, photo, buy]")
        #expect(tree(deep.session) == "app(tab-photos(buy), tab-purchases(buy))")
        let opened = try await h.act(id, .openLink, link: .photo(3))
        #expect(tabBar(opened.session) == "photos*: [photos, photo] · purchases: [purchases]")
        #expect(tree(opened.session) == "app(tab-photos, tab-purchases)")
        #expect(steps(opened.events) == [
            #"link.open app - {"link":"/photos/3"}"#,
            #"screen.pop app/purchases/buy buy {"photoId":1}"#,
            #"coordinator.finish app/purchases/buy - {"reason":"link"}"#,
            #"screen.pop app/purchases photo {"photoId":1}"#,
            #"screen.pop app/photos/buy buy {"photoId":2}"#,
            #"coordinator.finish app/photos/buy - {"reason":"link"}"#,
            #"screen.pop app/photos photo {"photoId":2}"#,
            #"tab.select app/photos - {"tab":"photos"}"#,
            #"screen.push app/photos photo {"photoId":3}"#,
        ])
        let purchases = try await h.act(id, .openLink, link: .purchases)
        #expect(tabBar(purchases.session) == "photos: [photos] · purchases*: [purchases]")
        #expect(purchases.session.navigation.first?.screens.first?.photos?.map(\.id) == [1])
    }

    @Test("bad links change nothing: malformed or not in the layout → 400, a photo that does not exist → 404; no session, no version, no row")
    func badLinks() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        for text in ["", "photos", "/photos/", "/photos/0", "/photos/01", "/photos/-1", "/photos/1/", "/photos/1/sell", "/photos/x", "/photos/1?x=1",
                     "/photos/1#top", "//photos", "/PHOTOS", "/purchases/1", "/photos/99999999999999999999", String(repeating: "/photos", count: 40)] {
            #expect(throws: PhotosError.self, "\(text)") { try DeepLink(parsing: text) }
        }
        #expect(try DeepLink(parsing: "/photos/42/buy") == .buy(42))
        let sessions = { try await h.sessionCount() }
        let before = try await sessions()
        let layoutError = await #expect(throws: PhotosError.self) { try await h.coordinator.createSession(link: .purchases) }
        #expect(layoutError?.code == .badRequest)
        for link in [DeepLink.photo(99), .buy(99)] {
            let missing = await #expect(throws: PhotosError.self) { try await h.coordinator.createSession(layout: .tabs, link: link) }
            #expect(missing?.code == .notFound)
        }
        #expect(try await sessions() == before, "a bad link created a session")

        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        let view = try await h.view(id)
        let rows = try await h.rows(id).count
        for link in [DeepLink.purchases, .photo(99), .buy(99)] {
            await #expect(throws: PhotosError.self) { try await h.coordinator.apply(ClientAction(.openLink, link: link), to: id) }
            #expect(try await h.view(id) == view, "\(link) changed the session")
            #expect(try await h.rows(id).count == rows, "\(link) wrote audit rows")
        }
        await #expect(throws: PhotosError.self) { try await h.coordinator.apply(ClientAction(.openLink), to: id) }
    }
}
