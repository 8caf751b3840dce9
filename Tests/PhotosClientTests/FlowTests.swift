import Foundation
import PhotosClient
import Testing

/// The design's twelve flows, tabs and deep links, driven through `NavigationDriver` against a
/// real photosd: each step's commands are the coordinator operations an app performs.
@Suite("PhotosClient: the flows through the driver", .serialized)
struct FlowTests {
    let alice = Action.submit(username: LiveServer.username, password: LiveServer.password)

    @Test("flows 1–3: start, select and back, sign in and out, cancel sign-in")
    func startSelectSignIn() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let journey = try await Journey(server.driver())
        #expect(journey.stacks == [[.photos]])
        #expect(journey.session.tree == "app")
        #expect(try await journey.send(.selectPhoto(2)) == [.push(photo(2, purchased: false))])
        #expect(try await journey.send(.back) == [.pop(1)])
        #expect(try await journey.send(.signIn) == [.present(PresentedStack(presentation: .modal, screens: [screen(.signIn)]))])
        #expect(try await journey.send(.cancel) == [.dismiss])
        #expect(!journey.session.actions.contains(.signOut))
        try await journey.send(.signIn)
        #expect(try await journey.send(alice) == [.dismiss])
        #expect(journey.outcome == .signedIn)
        #expect(journey.session.actions.contains(.signOut))
        #expect(try await journey.send(.signOut) == [])
        #expect(journey.outcome == .signedOut)
    }

    @Test("flows 4–6 and 11: horizontal purchase signed out (sign-in replaced by buy), signed in, cancel, already owned")
    func horizontalPurchase() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let journey = try await Journey(server.driver())
        try await journey.send(.selectPhoto(1))
        #expect(try await journey.send(.buy) == [.push(screen(.signIn))])
        #expect(journey.session.tree == "app(buy)")
        let resumed = try await journey.send(alice)
        #expect(resumed == [.replaceTop(Screen(.buy, photoId: 1, purchased: false))], "the flow resumes: buy replaces signIn")
        #expect(journey.stacks == [[.photos, .photo, .buy]])
        let bought = try await journey.send(.buy)
        #expect(journey.outcome == .purchased)
        #expect(bought == [.pop(1), .update(photo(1, purchased: true))], "the photo screen stays, now owned")
        #expect(journey.session.tree == "app")
        // Flow 5: signed in, buy pushes buy directly; flow 11: already owned.
        #expect(try await journey.send(.buy) == [.push(Screen(.buy, photoId: 1, purchased: true))], "the buy screen says the photo is owned")
        try await journey.send(.buy)
        #expect(journey.outcome == .alreadyOwned)
        #expect(journey.stacks == [[.photos, .photo]])
        // Flow 6: cancel on buy goes back to the initial screen, the child gone.
        try await journey.send(.back)
        try await journey.send(.selectPhoto(2))
        try await journey.send(.buy)
        #expect(try await journey.send(.cancel) == [.pop(1)])
        #expect(journey.session.tree == "app")
    }

    @Test("signing in on the way to buy a photo the user owns: buy replaces sign-in and the photo below is updated in place — no pop and push again")
    func signInOnAnOwnedPhoto() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let journey = try await Journey(server.driver())
        try await journey.send(.selectPhoto(1))
        try await journey.send(.buy)
        try await journey.send(alice)
        try await journey.send(.buy)
        #expect(journey.outcome == .purchased)
        try await journey.send(.back)
        try await journey.send(.signOut)
        // Signed out, the photo shows as not owned; signing in shows it is.
        #expect(try await journey.send(.selectPhoto(1)) == [.push(photo(1, purchased: false))])
        #expect(try await journey.send(.buy) == [.push(screen(.signIn))])
        let signedIn = try await journey.send(alice)
        #expect(signedIn == [.replaceTop(Screen(.buy, photoId: 1, purchased: true)), .update(photo(1, purchased: true))], "\(signedIn)")
        #expect(journey.stacks == [[.photos, .photo, .buy]])
    }

    @Test("flows 7–9: terms over buy, vertical purchase in three stacks, back and dismiss finish children")
    func verticalPurchaseAndTerms() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let journey = try await Journey(server.driver())
        #expect(try await journey.send(.buyPhoto(3)) == [.present(PresentedStack(presentation: .modal, screens: [screen(.signIn)]))])
        #expect(try await journey.send(alice) == [.replaceTop(Screen(.buy, photoId: 3, purchased: false))])
        #expect(try await journey.send(.showTerms) == [.present(PresentedStack(presentation: .modal, screens: [screen(.terms)]))])
        #expect(journey.stacks == [[.photos], [.buy], [.terms]])
        #expect(journey.session.tree == "app(buy(terms))")
        #expect(try await journey.send(.dismiss) == [.dismiss])
        #expect(journey.session.tree == "app(buy)")
        try await journey.send(.buy)
        #expect(journey.commands == [.dismiss])
        #expect(journey.outcome == .purchased)
        #expect(journey.stacks == [[.photos]])
        // Flow 9: back on buy inside a horizontal purchase finishes the child.
        try await journey.send(.selectPhoto(4))
        try await journey.send(.buy)
        #expect(try await journey.send(.back) == [.pop(1)])
        #expect(journey.session.tree == "app")
        // dismiss on a modal stack finishes the coordinator that presented it.
        try await journey.send(.back)
        try await journey.send(.buyPhoto(5))
        #expect(try await journey.send(.dismiss) == [.dismiss])
        #expect(journey.session.tree == "app")
    }

    @Test("flow 10 and typed errors: an action not offered, wrong credentials, a stale version, a missing photo")
    func typedErrors() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let driver = server.driver()
        let journey = try await Journey(driver)
        let version = journey.session.version
        await #expect(throws: NavigationError.actionNotAvailable(allowed: ["selectPhoto", "buyPhoto", "signIn"], message: "")) {
            do { _ = try await driver.send(.buy) } catch let NavigationError.actionNotAvailable(allowed, _) {
                throw NavigationError.actionNotAvailable(allowed: allowed, message: "")
            }
        }
        #expect(await driver.session?.version == version, "nothing changed")
        #expect(await driver.shown.stacks.map(\.screens) == [[screen(.photos)]])
        try await journey.send(.signIn)
        do {
            _ = try await driver.send(.submit(username: LiveServer.username, password: "not the password"))
            Issue.record("a wrong password was accepted")
        } catch let error {
            guard case .invalidCredentials = error else { Issue.record("\(error)"); return }
        }
        do {
            _ = try await driver.send(.openLink("/photos/999"))
            Issue.record("a missing photo was found")
        } catch let error {
            guard case .notFound = error else { Issue.record("\(error)"); return }
        }
        // Another device moves the session on: this one's next action is a version conflict,
        // the driver catches up by itself and its error carries the commands to where the
        // session is now; the next action goes with the new version.
        let other = server.driver()
        try await other.attach(sessionID: journey.session.id, secret: journey.secret)
        _ = try await other.send(.cancel)
        do {
            _ = try await driver.send(.cancel)
            Issue.record("a stale version was accepted")
        } catch let error {
            guard case .versionConflict(_, let caughtUp) = error else { Issue.record("\(error)"); return }
            #expect(caughtUp == [.dismiss])
            #expect(error.description.hasSuffix("caught up: dismiss"), "\(error)")
        }
        #expect(await driver.shown.stacks.map(\.screens) == [[screen(.photos)]])
        #expect(try await driver.refresh() == [], "caught up already")
        #expect(try await driver.send(.selectPhoto(1)).commands == [.push(photo(1, purchased: false))])
    }

    @Test("flow 12: after photosd restarts, attach resumes the same stacks, tree and flow")
    func restart() async throws {
        var server = try await LiveServer()
        defer { server.stop() }
        let journey = try await Journey(server.driver())
        try await journey.send(.selectPhoto(2))
        try await journey.send(.buy)
        let before = journey.session
        server = try await server.restarted()
        let driver = server.driver()
        let after = try await driver.attach(sessionID: before.id, secret: journey.secret)
        #expect(after.navigation == before.navigation)
        #expect(after.tree == "app(buy)")
        let step = try await driver.send(.submit(username: LiveServer.username, password: LiveServer.password))
        #expect(step.commands == [.replaceTop(Screen(.buy, photoId: 2, purchased: false))])
    }

    @Test("tabs: each tab keeps its stack; selecting the selected tab pops to root; purchases list at once")
    func tabs() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let journey = try await Journey(server.driver(), layout: .tabs)
        #expect(journey.session.tree == "app(tab,tab)")
        try await journey.send(.selectPhoto(1))
        #expect(try await journey.send(.selectTab(.purchases)) == [.selectTab(.purchases)])
        try await journey.send(.signIn)
        try await journey.send(alice)
        #expect(try await journey.send(.selectTab(.photos)) == [.selectTab(.photos)])
        #expect(journey.stacks == [[.photos, .photo]], "the photos tab as it was left")
        try await journey.send(.buy)
        try await journey.send(.buy)
        #expect(journey.outcome == .purchased)
        // The purchases tab changed while hidden: selecting it shows the new list.
        let shown = try await journey.send(.selectTab(.purchases))
        #expect(shown.first == .selectTab(.purchases))
        #expect(journey.session.navigation.root[0].photos?.map(\.id) == [1])
        #expect(try await journey.send(.selectPhoto(1)) == [.push(photo(1, purchased: true))])
        #expect(try await journey.send(.selectTab(.purchases)) == [.pop(1)], "the selected tab again: back to its root")
    }

    @Test("deep links: start at /photos/3/buy, openLink unwinds modal stacks and flows, and on tabs selects the tab")
    func deepLinks() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let journey = try await Journey(server.driver(), link: "/photos/3/buy")
        #expect(journey.stacks == [[.photos, .photo, .signIn]])
        #expect(journey.session.tree == "app(buy)")
        try await journey.send(.back)
        try await journey.send(.back)
        try await journey.send(.buyPhoto(2))
        try await journey.send(.openLink("/photos/4"))
        #expect(journey.commands == [.dismiss, .push(photo(4, purchased: false))])
        #expect(journey.session.tree == "app")
        let tabs = try await Journey(server.driver(), layout: .tabs, link: "/purchases")
        #expect(tabs.session.navigation.selectedTab == .purchases)
        try await tabs.send(.openLink("/photos/2/buy"))
        #expect(tabs.commands.first == .selectTab(.photos))
        #expect(tabs.stacks == [[.photos, .photo, .signIn]])
    }
}
