import PhotosModel

/// The purchase flow (the sample's `BuyCoordinator`), horizontal (`push`) or vertical (`modal`).
///
/// Signed out, it starts with `signIn` and, after a successful sign-in, resumes: `signIn` is
/// replaced by `buy` (so back from `buy` never lands on `signIn`). Under `signIn.when:
/// atPurchase` it starts with `buy` and asks for sign-in when buy is tapped; under
/// `terms.required: yes` buy is offered once the terms were shown. It finishes after the
/// purchase, on cancel, on back past its first screen, or when its modal stack is dismissed,
/// and puts the navigation back the way it found it.
final class BuyCoordinator: Coordinator {
    /// What the flow carries: a buy coordinator is made with a flow, and the interpreter keeps
    /// it one (the parent made it with `BuyFlow(…beginningOn:)`, the rule the interpreter
    /// follows at its `coordinator.start`).
    private let flowAtStart: BuyFlow
    private var flow: BuyFlow { model.flow ?? flowAtStart }

    /// A flow coordinator with id `id` running `flow`.
    init(id: String, flow: BuyFlow, path: String, context: NavigationContext) {
        flowAtStart = flow
        super.init(model: CoordinatorState(id: id, role: .buy(flow)), path: path, context: context)
    }
    private var photoId: Int64 { flow.photoId }
    /// The experiments' exposures its start records (set by the parent that took the points).
    var exposures: [NavigationContext.Exposure] = []
    /// `signIn.when: atPurchase`: a signed-out user sees the buy screen first and signs in when
    /// tapping buy; the purchase then completes.
    private var signInAtPurchase: Bool { flow.value(SignInWhen.self) == .atPurchase }

    override func start() {
        for exposure in exposures { context.recordExposure(exposure, by: path) }
        exposures = []
        let signInFirst = context.state.user == nil && !signInAtPurchase
        let first = ScreenState(signInFirst ? .signIn : .buy, photoId: signInFirst ? nil : photoId, owner: id)
        // Where the flow began (its stack, and for push its initial screen) was taken from the
        // stacks by the interpreter when `coordinator.start` was recorded.
        switch flow.presentation {
        case .push: context.push(first, by: path)
        case .modal: context.present(first, by: path)
        }
    }

    override func handle(_ action: ClientAction, on screen: ScreenState) throws {
        switch (screen.screen, action.name) {
        case (.signIn, .submit):
            switch context.credentialCheck {
            case .valid(let user)?:
                try context.signIn(user)
                if signInAtPurchase, let signedIn = context.state.user {
                    // Asked at the tap on buy: the sign-in gives way and the purchase completes.
                    context.pop(by: path)
                    try complete(by: signedIn)
                } else {
                    // The flow resumes where it was going.
                    context.replaceTop(with: ScreenState(.buy, photoId: photoId, owner: id), by: path)
                }
            default:
                context.signInFailed()
            }
        case (.buy, .buy):
            guard let user = context.state.user else {
                if signInAtPurchase {
                    // Sign in first, over the buy screen.
                    context.push(ScreenState(.signIn, owner: id), by: path)
                } else {
                    // Signed out under our feet (token revoked): ask again.
                    context.replaceTop(with: ScreenState(.signIn, owner: id), by: path)
                }
                return
            }
            try complete(by: user)
        case (.signIn, .cancel), (.buy, .cancel):
            finish(.cancelled)
        case (.buy, .showTerms):
            // (Under terms.required: yes, the terms' coordinator.start marks them seen.)
            let child = CoordinatorState(id: newChildID(.terms), role: .terms(presentedOver: context.state.stacks))
            pushCoordinator(TermsCoordinator(model: child, path: childPath(child), context: context))
        default:
            break
        }
    }

    /// The purchase (none if the user owns the photo already), then the flow finishes.
    private func complete(by user: SessionUser) throws {
        if let priceCents = try context.buy(photoId, by: user) {
            context.record(.purchaseCompleted, coordinator: path, detail: ["photoId": .int(photoId), "priceCents": .int(Int64(priceCents))])
            context.outcome = .purchased
        } else {
            context.outcome = .alreadyOwned
        }
        finish(.completed)
    }
    override func restoreNavigation() {
        let flow = self.flow
        let stackIndex = flow.stackIndex
        switch flow.presentation {
        case .push:
            guard stackIndex < context.state.stacks.count else { return }
            // Back to the initial screen, or to the root if that is gone.
            let depth = flow.initialDepth
            let target = context.state.stacks[stackIndex].screens.count >= depth ? depth : 1
            context.dismiss(downTo: stackIndex + 1, by: path)
            context.pop(stack: stackIndex, toDepth: target, by: path)
        case .modal:
            context.dismiss(downTo: stackIndex, by: path)
        }
    }
}
