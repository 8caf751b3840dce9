import PhotosModel

/// Shows the terms of service modally over the purchase flow (the sample's
/// `TermsCoordinator`); finishes by dismissing them.
final class TermsCoordinator: Coordinator {
    override func start() {
        context.present(ScreenState(.terms, owner: id), by: path)
    }

    override func handle(_ action: ClientAction, on screen: ScreenState) throws {
        if screen.screen == .terms && action.name == .cancel { finish(.cancelled) }
    }

    override func restoreNavigation() {
        // A terms coordinator's model is always `.terms` (made so by its parent, kept so by
        // the interpreter).
        guard case .terms(let stackIndex) = model.role else { return }
        context.dismiss(downTo: stackIndex, by: path)
    }
}
