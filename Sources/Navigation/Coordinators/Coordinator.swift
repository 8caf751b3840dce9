import PhotosModel

/// The base coordinator, after the sample: it owns `childCoordinators`, starts children with
/// `pushCoordinator` (installing their `didFinish` handler) and removes them in
/// `popCoordinator`. A child never holds a reference to its parent; it reports through
/// `didFinish`.
class Coordinator {
    /// The coordinator's persisted form, as the session's state holds it: the interpreter
    /// (`SessionState.apply`) keeps it from the steps, so a coordinator changes it only by
    /// recording one. Before its `coordinator.start` (and after its finish), what it was made with.
    var model: CoordinatorState { context.state.coordinators?.node(id: id) ?? created }
    /// What it was made with.
    private let created: CoordinatorState
    /// Where it sits in the tree, e.g. `app/buy/terms` (the audit trail's `coordinator`).
    let path: String
    /// The session's navigator, recorder and services. Unowned: the context outlives the tree.
    unowned let context: NavigationContext
    /// Live children, oldest first.
    private(set) var childCoordinators: [Coordinator] = []
    /// Called once when this coordinator has finished; installed by the parent.
    var didFinish: ((Coordinator) -> Void)?
    /// True once finished: a finished coordinator handles nothing more.
    private(set) var isFinished = false

    init(model: CoordinatorState, path: String, context: NavigationContext) {
        self.created = model
        self.path = path
        self.context = context
    }

    var id: String { created.id }

    /// Shows the coordinator's first screen. Subclasses override.
    func start() {}

    /// Adds a child, wires its `didFinish`, records `coordinator.start` and starts it.
    func pushCoordinator(_ child: Coordinator) {
        adopt(child)
        var detail: JSONObject = ["id": .string(child.id), "kind": .string(child.model.kind.rawValue)]
        switch child.model.role {
        case .tab(let tab): detail["tab"] = .string(tab.rawValue)
        case .buy(let flow):
            detail["presentation"] = .string(flow.presentation.rawValue)
            detail["photoId"] = .int(flow.photoId)
            // The values of the variation points the flow took (`"terms.required": "yes"`), so
            // that the trail alone tells how it will behave (the interpreter reads them back).
            for (point, value) in flow.variants { detail[point] = .string(value) }
        case .app, .terms: break
        }
        context.record(.coordinatorStart, coordinator: child.path, detail: detail)
        child.start()
    }

    /// Wires a child without starting it (used when rebuilding a persisted tree).
    func adopt(_ child: Coordinator) {
        child.didFinish = { [weak self] finished in self?.popCoordinator(finished) }
        childCoordinators.append(child)
    }

    /// Removes a finished child.
    func popCoordinator(_ child: Coordinator) {
        childCoordinators.removeAll { $0 === child }
    }

    /// Finishes children first, puts the navigation back as it found it, records
    /// `coordinator.finish` and tells the parent.
    func finish(_ reason: FinishReason) {
        guard !isFinished else { return }
        for child in childCoordinators.reversed() { child.finish(reason) }
        restoreNavigation()
        isFinished = true
        context.record(.coordinatorFinish, coordinator: path, detail: ["reason": .string(reason.rawValue)])
        didFinish?(self)
    }

    /// Undoes what the coordinator did to the stacks. Subclasses override.
    func restoreNavigation() {}

    /// Handles an action sent to one of the screens this coordinator owns.
    func handle(_ action: ClientAction, on screen: ScreenState) throws {}

    /// This coordinator and its descendants, depth first.
    var subtree: [Coordinator] { [self] + childCoordinators.flatMap(\.subtree) }

    /// Builds the coordinator object for a persisted state (without children).
    static func make(_ state: CoordinatorState, path: String, context: NavigationContext) -> Coordinator {
        switch state.role {
        case .app: AppCoordinator(model: state, path: path, context: context)
        case .tab: TabCoordinator(model: state, path: path, context: context)
        case .buy(let flow): BuyCoordinator(id: state.id, flow: flow, path: path, context: context)
        case .terms: TermsCoordinator(model: state, path: path, context: context)
        }
    }

    /// Rebuilds the object tree from its persisted form.
    static func restore(_ state: CoordinatorState, prefix: String = "", context: NavigationContext) -> Coordinator {
        var bare = state
        bare.children = []
        let coordinator = make(bare, path: prefix.isEmpty ? state.pathComponent : prefix + "/" + state.pathComponent, context: context)
        for child in state.children {
            coordinator.adopt(restore(child, prefix: coordinator.path, context: context))
        }
        return coordinator
    }

    /// Finishes (deepest first) every coordinator below this one that no longer owns a screen
    /// on any stack, a parked tab's included.
    func finishDescendantsWithoutScreens(reason: FinishReason) {
        let owners = Set(context.state.allStacks.flatMap { $0.screens.map(\.owner) })
        for coordinator in subtree.dropFirst().reversed() where !owners.contains(coordinator.id) {
            coordinator.finish(reason)
        }
    }

    /// Where a child with this state sits in the tree: this path and the child's path component
    /// (its kind, or its tab: `app/photos/buy`), the rule `restore` and the replay also follow.
    func childPath(_ child: CoordinatorState) -> String {
        path + "/" + child.pathComponent
    }

    /// A new child's id: its kind and the seq of its `coordinator.start` step.
    func newChildID(_ kind: CoordinatorKind) -> String {
        "\(kind.rawValue)-\(context.upcomingSeq)"
    }
}
