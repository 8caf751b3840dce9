import PhotosModel

extension SessionState {
    /// The one interpreter of a step: the state after `step`, on the stacks as they are shown
    /// now (a parked tab's steps are applied inside `enterTab`/`leaveTab` by the caller).
    ///
    /// Screens are pushed, popped, presented and dismissed; coordinators start (where their
    /// flow begins is taken from the stacks as they are) and finish; sign-ins, sign-outs,
    /// expiries, tab selections and experiment exposures change what they name. Every other
    /// step changes nothing. Throws when the state cannot take the step.
    public mutating func apply(_ step: NavigationStep) throws {
        let detail = step.detail
        let path = step.coordinator ?? ""
        switch step.step {
        case .sessionStart:
            self = .started(layout: detail.layout ?? .stack)
        case .tabSelect:
            guard let tab = detail.tab, tabs != nil, stacks.count == 1 else { throw StepNotApplicable(message: "tab.select without a tab, a tab bar, or under a modal") }
            showTab(tab)
        case .coordinatorStart:
            guard let id = detail.id, let kind = detail.kind else { throw StepNotApplicable(message: "coordinator.start without id and kind") }
            // Where a flow begins, for putting the navigation back when it finishes: the top of
            // the current stack (push), or the stack it is about to present (modal, terms).
            let role: CoordinatorState.Role
            switch kind {
            case .app: role = .app
            case .tab:
                guard let tab = detail.tab else { throw StepNotApplicable(message: "coordinator.start of a tab without its tab") }
                role = .tab(tab)
            case .terms: role = .terms(presentedOver: stacks)
            case .buy:
                guard let presentation = detail.presentation, let photoId = detail.photoId else {
                    throw StepNotApplicable(message: "coordinator.start of a purchase flow without its presentation and photoId")
                }
                role = .buy(BuyFlow(presentation: presentation, photoId: photoId, variants: detail.variants ?? [:], beginningOn: stacks))
            }
            let node = CoordinatorState(id: id, role: role)
            let parentPath = path.split(separator: "/").dropLast().joined(separator: "/")
            if parentPath.isEmpty {
                coordinators = node
            } else if !Self.update(&coordinators, at: parentPath, { parent in
                // Terms shown in a flow that requires them: buy is offered from now on.
                if kind == .terms, parent.flow?.value(TermsRequired.self) == .yes { parent.flow?.termsSeen = true }
                parent.children.append(node)
            }) {
                throw StepNotApplicable(message: "no coordinator at \(parentPath)")
            }
        case .coordinatorFinish:
            let parentPath = path.split(separator: "/").dropLast().joined(separator: "/")
            let component = path.split(separator: "/").last.map(String.init)
            if !Self.update(&coordinators, at: parentPath, { $0.children.removeAll { $0.pathComponent == component } }) {
                throw StepNotApplicable(message: "no coordinator at \(parentPath)")
            }
        case .screenPush:
            guard let screen = step.screen, let owner = coordinatorID(at: path) else { throw StepNotApplicable(message: "screen.push without screen or owner") }
            if stacks.isEmpty { stacks.append(StackState(presentation: .root, presenter: owner, screens: [])) }
            stacks[stacks.count - 1].screens.append(ScreenState(screen, photoId: detail.photoId, owner: owner))
        case .screenPop:
            guard !stacks.isEmpty, stacks[stacks.count - 1].screens.last?.screen == step.screen else {
                throw StepNotApplicable(message: "screen.pop of \(step.screen?.rawValue ?? "nothing") does not match the top screen")
            }
            stacks[stacks.count - 1].screens.removeLast()
        case .screenPresent:
            guard let screen = step.screen, let owner = coordinatorID(at: path) else { throw StepNotApplicable(message: "screen.present without screen or owner") }
            stacks.append(StackState(presentation: .modal, presenter: owner, screens: [ScreenState(screen, photoId: detail.photoId, owner: owner)]))
        case .screenDismiss:
            guard stacks.count > 1 else { throw StepNotApplicable(message: "screen.dismiss with no modal stack") }
            stacks.removeLast()
        case .authSignIn:
            guard let userId = detail.userId else { throw StepNotApplicable(message: "auth.signIn without user") }
            user = SessionUser(id: userId, username: step.username ?? NameCommitment.erasedName(userID: userId))
            tokenId = detail.tokenId
        case .authSignOut, .sessionExpired:
            // An ended session's row keeps no state; its replay keeps the screens it ended on.
            user = nil
            tokenId = nil
        case .experimentExposed:
            guard let experiment = detail.experiment, let variant = detail.variant else {
                throw StepNotApplicable(message: "experiment.exposed without experiment and variant")
            }
            let listed = ExperimentExposure(experiment: experiment, variant: variant)
            if !(experiments ?? []).contains(listed) { experiments = (experiments ?? []) + [listed] }
        case .action, .actionRejected, .authSignInFailed, .purchaseCompleted, .linkOpen, .userCreated, .photoAdded, .operatorCreated, .operatorRemoved, .userErased,
             .experimentAdded, .experimentStopped:
            break
        }
    }

    /// The id of the coordinator at `path` (followed down the tree, the newest child of each
    /// name, as `update` does; nothing is built on the way: it runs for every screen step).
    func coordinatorID(at path: String) -> String? {
        guard var node = coordinators else { return nil }
        var components = path.split(separator: "/")[...]
        guard components.popFirst() == Substring(node.pathComponent) else { return nil }
        while let next = components.popFirst() {
            guard let child = node.children.last(where: { $0.pathComponent == next }) else { return nil }
            node = child
        }
        return node.id
    }

    /// Applies `change` to the node at `path`; false if there is none.
    private static func update(_ node: inout CoordinatorState?, at path: String, _ change: (inout CoordinatorState) -> Void) -> Bool {
        guard var root = node else { return false }
        let components = path.split(separator: "/").map(String.init)
        guard components.first == root.pathComponent else { return false }
        let found = update(&root, components.dropFirst(), change)
        node = root
        return found
    }

    private static func update(_ node: inout CoordinatorState, _ rest: ArraySlice<String>, _ change: (inout CoordinatorState) -> Void) -> Bool {
        guard let next = rest.first else {
            change(&node)
            return true
        }
        guard let index = node.children.lastIndex(where: { $0.pathComponent == next }) else { return false }
        return update(&node.children[index], rest.dropFirst(), change)
    }
}
