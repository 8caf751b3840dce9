import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

/// The tab-bar layout, one test per rule of the design's contract section. Every action goes
/// through `SessionHarness.act`, which also checks the invariants, contiguous `seq`, the replay
/// of the trail and the hand-written JSON after it.
@Suite("Tab-bar layout")
struct TabsTests {
    @Test("a tabs session: one coordinator and one stack per tab, photos selected; each tab starts on its own root")
    func start() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let created = try await h.coordinator.createSession(layout: .tabs)
        expectHandWrittenJSON(created)
        let view = created.session
        #expect(view.layout == .tabs)
        #expect(tabBar(view) == "photos*: [photos] · purchases: [purchases]")
        #expect(view.navigation.map(\.presentation) == [.tab])
        #expect(view.navigation.first?.tab == .photos)
        #expect(tree(view) == "app(tab-photos, tab-purchases)")
        #expect(actions(view) == ["selectPhoto", "buyPhoto", "signIn", "selectTab"])
        #expect(steps(created.events) == [
            #"session.start - - {"layout":"tabs"}"#,
            #"coordinator.start app - {"kind":"app"}"#,
            #"coordinator.start app/photos - {"kind":"tab","tab":"photos"}"#,
            #"screen.push app/photos photos {}"#,
            #"coordinator.start app/purchases - {"kind":"tab","tab":"purchases"}"#,
            #"screen.push app/purchases purchases {}"#,
        ])
        try await h.checkInvariants(view.id)
    }

    @Test("a stack session says layout stack and has no tab bar; its trail is as before")
    func stackLayoutUnchanged() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let created = try await h.coordinator.createSession()
        #expect(created.session.layout == .stack)
        #expect(created.session.tabs == nil)
        #expect(created.session.jsonText.contains(#""layout":"stack""#) && created.session.jsonText.contains(#""tabs":null"#))
        #expect(steps(created.events) == [#"session.start - - {}"#, #"coordinator.start app - {"kind":"app"}"#, #"screen.push app photos {}"#])
        #expect(!actions(created.session).contains("selectTab"))
        let refused = try await h.coordinator.apply(ClientAction(.selectTab, tab: .purchases), to: created.session.id)
        #expect(refused.error?.code == .actionNotAvailable)
    }

    @Test("each tab keeps its own stack: switching shows the other tab's stack exactly as it was left")
    func eachTabKeepsItsStack() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        try await h.act(id, .selectPhoto, photoId: 2)
        let switched = try await h.act(id, .selectTab, tab: .purchases)
        #expect(tabBar(switched.session) == "photos: [photos, photo] · purchases*: [purchases]")
        #expect(stacks(switched.session) == "[purchases]")
        #expect(steps(switched.events) == [#"action app - {"action":"selectTab","tab":"purchases"}"#, #"tab.select app/purchases - {"tab":"purchases"}"#])
        #expect(actions(switched.session) == ["selectPhoto", "signIn", "selectTab"])
        let back = try await h.act(id, .selectTab, tab: .photos)
        #expect(stacks(back.session) == "[photos, photo]")
        #expect(back.session.navigation.first?.screens.last?.photoId == 2)
        #expect(tabBar(back.session) == "photos*: [photos, photo] · purchases: [purchases]")
        #expect(actions(back.session) == ["buy", "back", "selectTab"])
    }

    @Test("selecting the selected tab pops it to its root and finishes the flows whose screens it pops (reason back)")
    func reselectPopsAndFinishes() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        try await h.act(id, .selectPhoto, photoId: 1)
        let buying = try await h.act(id, .buy)
        #expect(stacks(buying.session) == "[photos, photo, signIn]")
        #expect(tree(buying.session) == "app(tab-photos(buy), tab-purchases)")
        #expect(buying.events.contains { $0.step == "coordinator.start" && $0.coordinator == "app/photos/buy" })
        let reselected = try await h.act(id, .selectTab, tab: .photos)
        #expect(stacks(reselected.session) == "[photos]")
        #expect(tree(reselected.session) == "app(tab-photos, tab-purchases)")
        #expect(steps(reselected.events) == [
            #"action app - {"action":"selectTab","tab":"photos"}"#,
            #"tab.select app/photos - {"tab":"photos"}"#,
            #"screen.pop app/photos signIn {}"#,
            #"screen.pop app/photos photo {"photoId":1}"#,
            #"coordinator.finish app/photos/buy - {"reason":"back"}"#,
        ])
        // The other tab is untouched by it.
        #expect(tabBar(reselected.session) == "photos*: [photos] · purchases: [purchases]")
    }

    @Test("no selectTab under a modal stack: refused with the allowed actions, nothing changed")
    func noSelectTabUnderModal() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        let presented = try await h.act(id, .signIn)
        #expect(stacks(presented.session) == "[photos] | [signIn]")
        #expect(!actions(presented.session).contains("selectTab"))
        let refused = try await h.coordinator.apply(ClientAction(.selectTab, tab: .purchases), to: id)
        #expect(refused.error?.code == .actionNotAvailable)
        #expect(refused.error?.allowed == [.submit, .cancel, .dismiss])
        #expect(refused.session.version == presented.session.version)
        #expect(steps(refused.events) == [#"action.rejected - - {"action":"selectTab","tab":"purchases"}"#])
        // Dismissing the tab's own sign-in leaves the tab's coordinator running.
        let dismissed = try await h.act(id, .dismiss)
        #expect(tree(dismissed.session) == "app(tab-photos, tab-purchases)")
        #expect(actions(dismissed.session).contains("selectTab"))
    }

    @Test("a purchase flow survives a tab switch and finishes where it started; the purchases tab lists it at once")
    func purchaseFlowSurvivesTabSwitch() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 3)
        try await h.act(id, .buy)
        let away = try await h.act(id, .selectTab, tab: .purchases)
        #expect(tree(away.session) == "app(tab-photos(buy), tab-purchases)")
        #expect(away.session.navigation.first?.screens.first?.photos == [])
        let returned = try await h.act(id, .selectTab, tab: .photos)
        #expect(stacks(returned.session) == "[photos, photo, buy]")
        let bought = try await h.act(id, .buy)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
        #expect(bought.session.navigation.first?.screens.last?.purchased == true)
        #expect(tree(bought.session) == "app(tab-photos, tab-purchases)")
        #expect(bought.events.contains { $0.step == "purchase.completed" && $0.coordinator == "app/photos/buy" })
        // Listed on the purchases tab at once, while that tab is parked and once it is shown.
        let parked = bought.session.tabs?.items.first { $0.tab == .purchases }?.screens.first?.photos
        #expect(parked?.map(\.id) == [3])
        let shown = try await h.act(id, .selectTab, tab: .purchases)
        #expect(shown.session.navigation.first?.screens.first?.photos?.map(\.id) == [3])
        #expect(shown.session.navigation.first?.screens.first?.photos?.first?.title == "Snow")
    }

    @Test("purchases lists the user's photos newest first, including those bought elsewhere; selectPhoto only for an owned photo")
    func purchasesScreen() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        try await h.signIn(id)
        try await h.act(id, .selectTab, tab: .purchases)
        // Bought elsewhere: another session, and the operator.
        let other = try await h.newSession()
        try await h.signIn(other)
        try await h.act(other, .buyPhoto, photoId: 1)
        try await h.act(other, .buy)
        try await h.buyOutside("alice", photoID: 2)
        let listed = try await h.view(id)
        #expect(listed.navigation.first?.screens.first?.photos?.map(\.id) == [2, 1])
        #expect(listed.navigation.first?.screens.first?.photos?.allSatisfy(\.purchased) == true)

        let before = try await h.view(id).version
        await #expect(throws: PhotosError.self) { try await h.coordinator.apply(ClientAction(.selectPhoto, photoId: 3), to: id) }
        #expect(try await h.view(id).version == before, "a photo not owned changed the session")
        let opened = try await h.act(id, .selectPhoto, photoId: 2)
        #expect(stacks(opened.session) == "[purchases, photo]")
        #expect(opened.session.navigation.first?.screens.last?.purchased == true)
        #expect(opened.events.contains { $0.step == "screen.push" && $0.coordinator == "app/purchases" && $0.screen == "photo" })
        // Buying it again from here: the flow runs on this tab and records no second purchase.
        try await h.act(id, .buy)
        let again = try await h.act(id, .buy)
        #expect(again.outcome == .alreadyOwned)
        #expect(stacks(again.session) == "[purchases, photo]")
    }

    @Test("signed out, purchases offers signIn, presented by the purchases tab; the list then fills")
    func purchasesSignIn() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        let shown = try await h.act(id, .selectTab, tab: .purchases)
        #expect(shown.session.navigation.first?.screens.first?.photos == [], "a signed-out user owns nothing")
        let presented = try await h.act(id, .signIn)
        #expect(presented.events.contains { $0.step == "screen.present" && $0.coordinator == "app/purchases" })
        let signedIn = try await h.act(id, .submit)
        #expect(signedIn.outcome == .signedIn)
        #expect(stacks(signedIn.session) == "[purchases]")
        #expect(signedIn.session.navigation.first?.screens.first?.photos == [])
        #expect(actions(signedIn.session) == ["selectPhoto", "selectTab"])
    }

    @Test("the operator signs a tabs session in and completes its purchase; it appears on the purchases tab")
    func operatorOnTabs() async throws {
        let h = try await SessionHarness.make()
        defer { h.close() }
        let id = try await h.newSession(layout: .tabs)
        try await h.act(id, .buyPhoto, photoId: 2)
        let signedIn = try await h.coordinator.operatorSignIn(sessionID: id, username: "alice", actor: testOperator)
        #expect(stacks(signedIn.session) == "[photos] | [buy]")
        let bought = try await h.coordinator.operatorPurchase(sessionID: id, actor: testOperator)
        #expect(bought.outcome == .purchased)
        #expect(bought.events.contains { $0.step == "purchase.completed" && $0.coordinator == "app/photos/buy" && $0.actor == "operator:tester" })
        #expect(bought.session.tabs?.items.last?.screens.first?.photos?.map(\.id) == [2])
        try await h.checkInvariants(id)
    }
}
