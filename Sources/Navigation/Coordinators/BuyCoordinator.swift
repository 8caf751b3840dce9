import PhotosModel

/// The purchase flow (the sample's `BuyCoordinator`), horizontal (`push`) or vertical (`modal`).
///
/// Signed out, it starts with `signIn` and, after a successful sign-in, resumes: `signIn` is
/// replaced by `buy` (so back from `buy` never lands on `signIn`). It finishes after the
/// purchase, on cancel, on back past its first screen, or when its modal stack is dismissed,
/// and puts the navigation back the way it found it.
final class BuyCoordinator: Coordinator {
    private var photoId: Int64 { model.photoId ?? 0 }

    override func start() {
        let first = ScreenState(context.state.user == nil ? .signIn : .buy, photoId: context.state.user == nil ? nil : photoId, owner: id)
        switch model.presentation ?? .push {
        case .push:
            // Remember the initial screen: the top of the current stack.
            let stackIndex = context.state.stacks.count - 1
            model.stackIndex = stackIndex
            model.initialDepth = context.state.stacks[stackIndex].screens.count
            context.push(first, by: path)
        case .modal:
            model.stackIndex = context.present(first, by: path, presenter: id)
        }
    }

    override func handle(_ action: ClientAction, on screen: ScreenState) throws {
        switch (screen.screen, action.name) {
        case (.signIn, .submit):
            switch context.credentialCheck {
            case .valid(let user)?:
                try context.signIn(user)
                // The flow resumes where it was going.
                context.replaceTop(with: ScreenState(.buy, photoId: photoId, owner: id), by: path)
            default:
                context.signInFailed()
            }
        case (.buy, .buy):
            guard let user = context.state.user else {
                // Signed out under our feet (token revoked): ask again.
                context.replaceTop(with: ScreenState(.signIn, owner: id), by: path)
                return
            }
            if let priceCents = try context.buy(photoId, by: user) {
                context.record(.purchaseCompleted, coordinator: path, detail: ["photoId": .int(photoId), "priceCents": .int(Int64(priceCents))])
                context.outcome = .purchased
            } else {
                context.outcome = .alreadyOwned
            }
            finish(.completed)
        case (.signIn, .cancel), (.buy, .cancel):
            finish(.cancelled)
        case (.buy, .showTerms):
            let child = CoordinatorState(kind: .terms, id: newChildID(.terms))
            pushCoordinator(TermsCoordinator(model: child, path: childPath(child), context: context))
        default:
            break
        }
    }

    override func restoreNavigation() {
        let stackIndex = model.stackIndex ?? 0
        switch model.presentation ?? .push {
        case .push:
            guard stackIndex < context.state.stacks.count else { return }
            // Back to the initial screen, or to the root if that is gone.
            let depth = model.initialDepth ?? 1
            let target = context.state.stacks[stackIndex].screens.count >= depth ? depth : 1
            context.dismiss(downTo: stackIndex + 1, by: path)
            context.pop(stack: stackIndex, toDepth: target, by: path)
        case .modal:
            context.dismiss(downTo: stackIndex, by: path)
        }
    }
}
