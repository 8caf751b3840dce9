import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Sessions
import Testing

/// The variation points of docs/design.md, "Flow experiments": each point's behaviour, its
/// exposure in the trail, assignment and its stickiness — on the pure core and every store.
@Suite("Flow experiments")
struct ExperimentFlowTests {
    /// The exposure rows of `rows`: `experiment point variant coordinator`.
    static func exposures(_ rows: [AuditRow]) -> [String] {
        rows.filter { $0.step == "experiment.exposed" }.compactMap { row in
            guard let object = try? JSONSerialization.jsonObject(with: Data(row.detail.utf8)) as? [String: String] else { return nil }
            return [object["experiment"] ?? "?", object["point"] ?? "?", object["variant"] ?? "?", row.coordinator ?? "-"].joined(separator: " ")
        }
    }

    @Test("buy.presentation: modal presents the purchase flow from a photo's screen as a sheet; finishing dismisses it", arguments: TestStore.navigation)
    func buyPresentationModal(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("sheet", .buyPresentation, "push:0,modal:100")
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 1)
        let started = try await h.act(id, .buy)
        #expect(stacks(started.session) == "[photos, photo] | [signIn]")
        #expect(tree(started.session) == "app(buy)")
        #expect(started.session.coordinators?.children.first?.presentation == .modal)
        #expect(Self.exposures(started.events) == ["sheet buy.presentation modal app/buy"])
        #expect(started.session.experiments == [ExperimentView(name: "sheet", variant: "modal")])
        let signedIn = try await h.act(id, .submit)
        #expect(stacks(signedIn.session) == "[photos, photo] | [buy]")
        let bought = try await h.act(id, .buy)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
        #expect(bought.session.navigation[0].screens[1].purchased == true)
        #expect(tree(bought.session) == "app")
        #expect(Self.exposures(bought.events).isEmpty, "one exposure per flow")
        // The list's purchase flow is modal whatever the point says, and takes no exposure of it.
        try await h.act(id, .back)
        let fromList = try await h.act(id, .buyPhoto, photoId: 2)
        #expect(stacks(fromList.session) == "[photos] | [buy]")
        #expect(Self.exposures(fromList.events).isEmpty)
        // The session still lists its exposure.
        #expect(try await h.view(id).experiments == [ExperimentView(name: "sheet", variant: "modal")])
    }

    @Test("buy.presentation: the control pushes as with no experiment, and is exposed too", arguments: TestStore.navigation)
    func buyPresentationControl(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("sheet", .buyPresentation, "push:100,modal:0")
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 1)
        let started = try await h.act(id, .buy)
        #expect(stacks(started.session) == "[photos, photo, signIn]")
        #expect(Self.exposures(started.events) == ["sheet buy.presentation push app/buy"])
    }

    @Test("signIn.when: atPurchase shows buy first and asks for sign-in at the tap, then the purchase completes", arguments: TestStore.navigation)
    func signInAtPurchase(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("late-sign-in", .signInWhen, "atBuy:0,atPurchase:100")
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 2)
        let started = try await h.act(id, .buy)
        #expect(stacks(started.session) == "[photos, photo, buy]")
        #expect(actions(started.session) == ["buy", "cancel", "showTerms", "back"])
        #expect(Self.exposures(started.events) == ["late-sign-in signIn.when atPurchase app/buy"])
        let asked = try await h.act(id, .buy)
        #expect(stacks(asked.session) == "[photos, photo, buy, signIn]")
        #expect(asked.outcome == .navigated)
        #expect(try await h.purchaseCount() == 0)
        // Back from sign-in returns to buy; the flow goes on.
        let backed = try await h.act(id, .back)
        #expect(stacks(backed.session) == "[photos, photo, buy]")
        #expect(tree(backed.session) == "app(buy)")
        try await h.act(id, .buy)
        let failed = try await h.act(id, .submit, password: "wrong password")
        #expect(failed.error?.code == .invalidCredentials)
        let bought = try await h.act(id, .submit)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
        #expect(bought.session.user?.username == "alice")
        #expect(tree(bought.session) == "app")
        #expect(try await h.purchaseList() == ["alice:2"])
        #expect(steps(bought.events).contains("screen.pop app/buy signIn {}"))
        // Signed in, a new flow shows buy as always; the point is not taken, so no exposure.
        try await h.act(id, .back)
        try await h.act(id, .selectPhoto, photoId: 3)
        let signedInFlow = try await h.act(id, .buy)
        #expect(stacks(signedInFlow.session) == "[photos, photo, buy]")
        #expect(Self.exposures(signedInFlow.events).isEmpty)
    }

    @Test("signIn.when: cancel on the sign-in a tap on buy asked for ends the flow", arguments: TestStore.navigation)
    func signInAtPurchaseCancelled(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("late-sign-in", .signInWhen, "atBuy:0,atPurchase:1")
        let id = try await h.newSession()
        try await h.act(id, .buyPhoto, photoId: 1)
        let asked = try await h.act(id, .buy)
        #expect(stacks(asked.session) == "[photos] | [buy, signIn]")
        let cancelled = try await h.act(id, .cancel)
        #expect(stacks(cancelled.session) == "[photos]")
        #expect(tree(cancelled.session) == "app")
        #expect(try await h.purchaseCount() == 0)
    }

    @Test("terms.required: yes offers buy only once the terms were shown in this flow", arguments: TestStore.navigation)
    func termsRequired(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("terms-first", .termsRequired, "no:0,yes:100")
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .selectPhoto, photoId: 1)
        let started = try await h.act(id, .buy)
        #expect(stacks(started.session) == "[photos, photo, buy]")
        #expect(actions(started.session) == ["cancel", "showTerms", "back"])
        #expect(Self.exposures(started.events) == ["terms-first terms.required yes app/buy"])
        let refused = try await h.coordinator.apply(ClientAction(.buy), to: id)
        #expect(refused.error?.code == .actionNotAvailable)
        #expect(refused.error?.allowed == [.cancel, .showTerms, .back])
        try await h.act(id, .showTerms)
        let read = try await h.act(id, .cancel)
        #expect(actions(read.session) == ["buy", "cancel", "showTerms", "back"])
        let bought = try await h.act(id, .buy)
        #expect(bought.outcome == .purchased)
        // A new flow asks again.
        try await h.act(id, .back)
        try await h.act(id, .selectPhoto, photoId: 2)
        let next = try await h.act(id, .buy)
        #expect(actions(next.session) == ["cancel", "showTerms", "back"])
    }

    @Test("the three points at once, signed out from a photo: a sheet with buy first, terms required; replay holds throughout", arguments: TestStore.navigation)
    func allPointsAtOnce(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("sheet", .buyPresentation, "push:0,modal:1")
        try await h.addExperiment("late-sign-in", .signInWhen, "atBuy:0,atPurchase:1")
        try await h.addExperiment("terms-first", .termsRequired, "no:0,yes:1")
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 3)
        let started = try await h.act(id, .buy)
        #expect(stacks(started.session) == "[photos, photo] | [buy]")
        #expect(actions(started.session) == ["cancel", "showTerms", "dismiss"])
        #expect(Self.exposures(started.events).count == 3)
        #expect(started.session.experiments.map(\.name).sorted() == ["late-sign-in", "sheet", "terms-first"])
        let coordinatorStart = try #require(started.events.first { $0.step == "coordinator.start" })
        #expect(coordinatorStart.detail.contains(#""buy.presentation":"modal""#) && coordinatorStart.detail.contains(#""terms.required":"yes""#))
        try await h.act(id, .showTerms)
        try await h.act(id, .dismiss)
        try await h.act(id, .buy)
        let bought = try await h.act(id, .submit)
        #expect(bought.outcome == .purchased)
        #expect(stacks(bought.session) == "[photos, photo]")
    }

    @Test("assignment is by session while signed out and by user once signed in, the same in every session; a flow keeps its variant when the experiment stops", arguments: TestStore.navigation)
    func stickyAssignment(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("split", .termsRequired, "no:50,yes:50")
        let experiment = Experiment(name: "split", point: .termsRequired, variants: [.init(name: "no", weight: 50), .init(name: "yes", weight: 50)])
        // Signed out: the session is the subject, and its every flow takes the same variant.
        let anonymous = try await h.newSession()
        var variants: Set<String> = []
        for _ in 0..<3 {
            let started = try await h.act(anonymous, .buyPhoto, photoId: 1)
            #expect(Self.exposures(started.events).count == 1)
            variants.formUnion(Self.exposures(started.events).map { String($0.split(separator: " ")[2]) })
            try await h.act(anonymous, .cancel)
        }
        #expect(variants == [experiment.assignment(of: "session:\(anonymous)")])
        // Signed in: the user is the subject, in every session.
        let expected = experiment.assignment(of: "user:1")
        for _ in 0..<3 {
            let id = try await h.newSession()
            try await h.signIn(id)
            let started = try await h.act(id, .buyPhoto, photoId: 2)
            #expect(Self.exposures(started.events) == ["split terms.required \(expected) app/buy"])
        }
        // Another instance (or a restart): its own process state, the same assignment.
        if let database = h.database {
            let other = try database.sessions(auth: try h.auth)
            let id = try await other.createSession().session.id
            _ = try await other.apply(ClientAction(.signIn), to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
            _ = try await other.apply(ClientAction(.submit, username: "alice", password: SessionHarness.password), to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
            let started = try await other.apply(ClientAction(.buyPhoto, photoId: 3), to: id, expectVersion: nil, idempotencyKey: nil, actor: .client)
            #expect(Self.exposures(started.events) == ["split terms.required \(expected) app/buy"])
        }
        // Stopped with a rollout: a flow started before keeps its variant; new flows get the
        // kept one, with no exposure.
        let id = try await h.newSession()
        try await h.signIn(id)
        try await h.act(id, .buyPhoto, photoId: 2)
        let kept = expected == "yes" ? "no" : "yes"
        try await h.stopExperiment("split", keep: kept)
        let during = try await h.view(id)
        #expect(during.top?.actions.contains(.buy) == (expected == "no"), "the running flow kept \(expected)")
        try await h.act(id, .cancel)
        let after = try await h.act(id, .buyPhoto, photoId: 2)
        #expect(Self.exposures(after.events).isEmpty)
        #expect(after.session.top?.actions.contains(.buy) == (kept == "no"))
    }

    @Test("stopped without --keep, new flows get the control; a new experiment on the point governs from its start", arguments: TestStore.navigation)
    func stoppedGivesControl(store: TestStore) async throws {
        let h = try await SessionHarness.make(store)
        defer { h.close() }
        try await h.addExperiment("first", .buyPresentation, "modal:0,push:100")
        try await h.stopExperiment("first")
        let id = try await h.newSession()
        try await h.act(id, .selectPhoto, photoId: 1)
        let control = try await h.act(id, .buy)
        #expect(stacks(control.session) == "[photos, photo] | [signIn]", "the control of 'first' is modal")
        #expect(Self.exposures(control.events).isEmpty)
        try await h.act(id, .cancel)
        try await h.addExperiment("second", .buyPresentation, "push:1,modal:0")
        let second = try await h.act(id, .buy)
        #expect(stacks(second.session) == "[photos, photo, signIn]")
        #expect(Self.exposures(second.events) == ["second buy.presentation push app/buy"])
    }
}
