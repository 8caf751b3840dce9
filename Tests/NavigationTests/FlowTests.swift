import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import Sessions
import SQLiteStore
import Testing

/// The 12 flows of docs/design.md, "The coordinator model", each an acceptance scenario.
@Suite("Flows")
struct FlowTests {
    @Test("1. start: [photos], tree app", arguments: TestStore.navigation)
    func start(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let result = try await h.coordinator.createSession()
        #expect(stacks(result.session) == "[photos]")
        #expect(tree(result.session) == "app")
        #expect(result.session.user == nil)
        #expect(result.session.version == 1)
        #expect(actions(result.session) == ["selectPhoto", "buyPhoto", "signIn"])
        #expect(steps(result.events) == [
            "session.start - - {}",
            "coordinator.start app - {\"kind\":\"app\"}",
            "screen.push app photos {}",
        ])
        #expect(result.session.id.count >= 22)
        try await h.checkInvariants(result.session.id)
    }

    @Test("2. selectPhoto pushes photo; back pops it", arguments: TestStore.navigation)
    func selectAndBack(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        let selected = try await h.act(id, .selectPhoto, photoId: 2)
        #expect(stacks(selected.session) == "[photos, photo]")
        #expect(selected.session.navigation[0].screens[1] == ScreenView(screen: .photo, photoId: 2, purchased: false))
        #expect(actions(selected.session) == ["buy", "back"])
        #expect(steps(selected.events) == [
            "action app - {\"action\":\"selectPhoto\",\"photoId\":2}",
            "screen.push app photo {\"photoId\":2}",
        ])
        let back = try await h.act(id, .back)
        #expect(stacks(back.session) == "[photos]")
        #expect(steps(back.events) == ["action app - {\"action\":\"back\"}", "screen.pop app photo {\"photoId\":2}"])
        #expect(back.session.version == 3)
    }

    @Test("3. modal sign-in from photos: success dismisses and signs in; cancel and failure do not", arguments: TestStore.navigation)
    func modalSignIn(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        let shown = try await h.act(id, .signIn)
        #expect(stacks(shown.session) == "[photos] | [signIn]")
        #expect(actions(shown.session) == ["submit", "cancel", "dismiss"])
        #expect(steps(shown.events) == ["action app - {\"action\":\"signIn\"}", "screen.present app signIn {}"])

        let cancelled = try await h.act(id, .cancel)
        #expect(stacks(cancelled.session) == "[photos]")
        #expect(cancelled.session.user == nil)
        #expect(steps(cancelled.events) == ["action app - {\"action\":\"cancel\"}", "screen.dismiss app signIn {}"])

        try await h.act(id, .signIn)
        let failed = try await h.act(id, .submit, password: "wrong password")
        #expect(failed.error?.code == .invalidCredentials)
        #expect(failed.outcome == .signInFailed)
        #expect(failed.token == nil)
        #expect(stacks(failed.session) == "[photos] | [signIn]")
        #expect(steps(failed.events) == ["action app - {\"action\":\"submit\"}", "auth.signInFailed - - {\"attemptedUserId\":1}"])

        let signedIn = try await h.act(id, .submit)
        #expect(signedIn.outcome == .signedIn)
        #expect(signedIn.token != nil)
        #expect(signedIn.session.user?.username == "alice")
        #expect(stacks(signedIn.session) == "[photos]")
        #expect(actions(signedIn.session) == ["selectPhoto", "buyPhoto", "signOut"])
        #expect(steps(signedIn.events) == ["action app - {\"action\":\"submit\"}", "auth.signIn - - {…}", "screen.dismiss app signIn {}"])
        #expect(signedIn.events[1].username == "alice")
        #expect(try await h.tokenUser(signedIn.token ?? "") == "alice")

        let signedOut = try await h.act(id, .signOut)
        #expect(signedOut.session.user == nil)
        #expect(steps(signedOut.events) == ["action app - {\"action\":\"signOut\"}", "auth.signOut - - {\"reason\":\"signOut\"}"])
        await #expect(throws: PhotosError.unauthorized("token revoked")) { try await h.tokenUser(signedIn.token ?? "") }
    }

    @Test("4. horizontal purchase, signed out: sign-in is inserted, then the flow resumes", arguments: TestStore.navigation)
    func horizontalPurchaseSignedOut(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 1)
        let started = try await h.act(id, .buy)
        #expect(stacks(started.session) == "[photos, photo, signIn]")
        #expect(tree(started.session) == "app(buy)")
        #expect(started.session.coordinators?.children.first?.presentation == .push)
        #expect(actions(started.session) == ["submit", "cancel", "back"])
        #expect(steps(started.events) == [
            "action app - {\"action\":\"buy\"}",
            "coordinator.start app/buy - {\"kind\":\"buy\",\"photoId\":1,\"presentation\":\"push\"}",
            "screen.push app/buy signIn {}",
        ])
        let resumed = try await h.act(id, .submit)
        #expect(stacks(resumed.session) == "[photos, photo, buy]")
        #expect(actions(resumed.session) == ["buy", "cancel", "showTerms", "back"])
        #expect(steps(resumed.events) == [
            "action app/buy - {\"action\":\"submit\"}",
            "auth.signIn - - {…}",
            "screen.pop app/buy signIn {}",
            "screen.push app/buy buy {\"photoId\":1}",
        ])
        #expect(try await h.purchaseCount() == 0)
        let bought = try await h.act(id, .buy)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
        #expect(bought.session.navigation[0].screens[1].purchased == true)
        #expect(tree(bought.session) == "app")
        #expect(steps(bought.events) == [
            "action app/buy - {\"action\":\"buy\"}",
            "purchase.completed app/buy - {\"photoId\":1,\"priceCents\":250}",
            "screen.pop app/buy buy {\"photoId\":1}",
            "coordinator.finish app/buy - {\"reason\":\"completed\"}",
        ])
        #expect(try await h.purchaseCount() == 1)
    }

    @Test("sample regression: signed out, buy → signIn → submit → the buy screen appears", arguments: TestStore.navigation)
    func flowDoesNotSilentlyStop(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 3)
        try await h.act(id, .buy)
        let afterSignIn = try await h.act(id, .submit)
        #expect(afterSignIn.session.top?.screen == .buy)
        #expect(tree(afterSignIn.session) == "app(buy)")
    }

    @Test("5. horizontal purchase, signed in: buy is pushed directly", arguments: TestStore.navigation)
    func horizontalPurchaseSignedIn(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 2)
        let started = try await h.act(id, .buy)
        #expect(stacks(started.session) == "[photos, photo, buy]")
        #expect(steps(started.events).last == "screen.push app/buy buy {\"photoId\":2}")
        let bought = try await h.act(id, .buy)
        #expect(stacks(bought.session) == "[photos, photo]")
        #expect(try await h.purchaseCount() == 1)
    }

    @Test("6. cancel on signIn or buy inside the purchase flow returns to the initial screen", arguments: TestStore.navigation)
    func cancelInsideFlow(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        let cancelledSignIn = try await h.act(id, .cancel)
        #expect(stacks(cancelledSignIn.session) == "[photos, photo]")
        #expect(tree(cancelledSignIn.session) == "app")
        #expect(steps(cancelledSignIn.events) == [
            "action app/buy - {\"action\":\"cancel\"}",
            "screen.pop app/buy signIn {}",
            "coordinator.finish app/buy - {\"reason\":\"cancelled\"}",
        ])
        try await h.act(id, .buy)
        try await h.act(id, .submit)
        let cancelledBuy = try await h.act(id, .cancel)
        #expect(stacks(cancelledBuy.session) == "[photos, photo]")
        #expect(tree(cancelledBuy.session) == "app")
        #expect(try await h.purchaseCount() == 0)
    }

    @Test("7. terms: a child of buy presents [terms]; cancel or dismiss returns to buy", arguments: TestStore.navigation)
    func terms(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        let shown = try await h.act(id, .showTerms)
        #expect(stacks(shown.session) == "[photos, photo, buy] | [terms]")
        #expect(tree(shown.session) == "app(buy(terms))")
        #expect(actions(shown.session) == ["cancel", "dismiss"])
        #expect(steps(shown.events) == [
            "action app/buy - {\"action\":\"showTerms\"}",
            "coordinator.start app/buy/terms - {\"kind\":\"terms\"}",
            "screen.present app/buy/terms terms {}",
        ])
        let cancelled = try await h.act(id, .cancel)
        #expect(stacks(cancelled.session) == "[photos, photo, buy]")
        #expect(tree(cancelled.session) == "app(buy)")
        #expect(steps(cancelled.events) == [
            "action app/buy/terms - {\"action\":\"cancel\"}",
            "screen.dismiss app/buy/terms terms {}",
            "coordinator.finish app/buy/terms - {\"reason\":\"cancelled\"}",
        ])
        try await h.act(id, .showTerms)
        let dismissed = try await h.act(id, .dismiss)
        #expect(stacks(dismissed.session) == "[photos, photo, buy]")
        #expect(tree(dismissed.session) == "app(buy)")
        #expect(steps(dismissed.events).last == "coordinator.finish app/buy/terms - {\"reason\":\"dismissed\"}")
    }

    @Test("8. vertical purchase: a modal stack [signIn] then [buy]; finishing dismisses it", arguments: TestStore.navigation)
    func verticalPurchase(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        let started = try await h.act(id, .buyPhoto, photoId: 3)
        #expect(stacks(started.session) == "[photos] | [signIn]")
        #expect(started.session.coordinators?.children.first?.presentation == .modal)
        #expect(actions(started.session) == ["submit", "cancel", "dismiss"])
        #expect(steps(started.events) == [
            "action app - {\"action\":\"buyPhoto\",\"photoId\":3}",
            "coordinator.start app/buy - {\"kind\":\"buy\",\"photoId\":3,\"presentation\":\"modal\"}",
            "screen.present app/buy signIn {}",
        ])
        let resumed = try await h.act(id, .submit)
        #expect(stacks(resumed.session) == "[photos] | [buy]")
        let terms = try await h.act(id, .showTerms)
        #expect(stacks(terms.session) == "[photos] | [buy] | [terms]")
        try await h.act(id, .cancel)
        let bought = try await h.act(id, .buy)
        #expect(stacks(bought.session) == "[photos]")
        #expect(tree(bought.session) == "app")
        #expect(steps(bought.events) == [
            "action app/buy - {\"action\":\"buy\"}",
            "purchase.completed app/buy - {\"photoId\":3,\"priceCents\":300}",
            "screen.dismiss app/buy buy {}",
            "coordinator.finish app/buy - {\"reason\":\"completed\"}",
        ])
        // Signed in now: the vertical flow goes straight to buy.
        let again = try await h.act(id, .buyPhoto, photoId: 2)
        #expect(stacks(again.session) == "[photos] | [buy]")
    }

    @Test("9. back below a pushed child's screens finishes it; dismiss finishes the presenter", arguments: TestStore.navigation)
    func navigatingBackwards(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        let backFromSignIn = try await h.act(id, .back)
        #expect(stacks(backFromSignIn.session) == "[photos, photo]")
        #expect(tree(backFromSignIn.session) == "app")
        #expect(steps(backFromSignIn.events) == [
            "action app/buy - {\"action\":\"back\"}",
            "screen.pop app/buy signIn {}",
            "coordinator.finish app/buy - {\"reason\":\"back\"}",
        ])
        try await h.act(id, .buy)
        try await h.act(id, .submit)
        let backFromBuy = try await h.act(id, .back)
        #expect(stacks(backFromBuy.session) == "[photos, photo]", "back from buy must not land on signIn")
        #expect(steps(backFromBuy.events).last == "coordinator.finish app/buy - {\"reason\":\"back\"}")

        // Dismissing a modal purchase flow finishes it, and its children with it.
        try await h.act(id, .back)
        try await h.act(id, .buyPhoto, photoId: 2)
        let dismissed = try await h.act(id, .dismiss)
        #expect(stacks(dismissed.session) == "[photos]")
        #expect(tree(dismissed.session) == "app")
        #expect(steps(dismissed.events) == [
            "action app/buy - {\"action\":\"dismiss\"}",
            "screen.dismiss app/buy buy {}",
            "coordinator.finish app/buy - {\"reason\":\"dismissed\"}",
        ])
    }

    @Test("10. an action the top screen does not offer: 409 with the allowed list, only an action.rejected row", arguments: TestStore.navigation)
    func rejectedAction(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        let before = try await h.coordinator.session(id: id)
        let rejected = try await h.coordinator.apply(ClientAction(.showTerms), to: id)
        #expect(rejected.error?.code == .actionNotAvailable)
        #expect(rejected.error?.allowed == [.selectPhoto, .buyPhoto, .signIn])
        #expect(rejected.outcome == .rejected)
        #expect(rejected.session == before)
        #expect(steps(rejected.events) == ["action.rejected - - {\"action\":\"showTerms\"}"])
        #expect(try await h.coordinator.session(id: id) == before)
        try await h.checkInvariants(id)
    }

    @Test("11. buying a photo already owned records no second purchase and finishes", arguments: TestStore.navigation)
    func alreadyOwned(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 1)
        try await h.act(id, .buy)
        try await h.act(id, .buy)
        try await h.act(id, .buy)
        let again = try await h.act(id, .buy)
        #expect(again.outcome == .alreadyOwned)
        #expect(stacks(again.session) == "[photos, photo]")
        #expect(tree(again.session) == "app")
        #expect(!steps(again.events).contains { $0.hasPrefix("purchase.completed") })
        #expect(try await h.purchaseCount() == 1)
    }

    @Test("12. a session survives a restart: fresh connections and objects continue the flow", arguments: TestStore.navigation)
    func survivesRestart(store: TestStore) async throws {
        let test = try await TestDatabase.make(store)
        defer { test.close() }
        await test.database.close()
        var configuration = test.configuration()
        configuration.bcryptCost = 4
        configuration.auditSigningKeyPath = test.directory.file("audit-signing.key")
        configuration.secretKeyPath = test.directory.file("photosd-secret.key")
        var database = try await PhotosDatabase.open(configuration)
        var services = try PhotosServices(configuration: configuration, database: database)
        _ = try await services.catalog.add(NewPhoto(title: "Sunset", priceCents: 250), actor: testOperator)
        _ = try await services.auth.createUser(username: "alice", password: SessionHarness.password, actor: testOperator)
        var coordinator = services.sessions
        let id = try await coordinator.createSession().session.id
        _ = try await coordinator.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
        _ = try await coordinator.apply(ClientAction(.buy), to: id)
        let before = try await coordinator.session(id: id)
        await database.close()

        database = try await PhotosDatabase.open(configuration)
        defer { Task { [database] in await database.close() } }
        services = try PhotosServices(configuration: configuration, database: database)
        coordinator = services.sessions
        #expect(try await coordinator.session(id: id) == before)
        let resumed = try await coordinator.apply(ClientAction(.submit, username: "alice", password: SessionHarness.password), to: id)
        #expect(stacks(resumed.session) == "[photos, photo, buy]")
        let bought = try await coordinator.apply(ClientAction(.buy), to: id)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
    }
}
