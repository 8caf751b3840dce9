import PhotosModel

extension AppCoordinator {
    /// `openLink`, and a session created with a link: records `link.open`, unwinds everything
    /// to the roots, then taps its way to the link's place through the same coordinator code a
    /// client's taps reach — there is no second way into a state. Throws `not_found` for a photo
    /// that does not exist; the caller's transaction then keeps nothing of it.
    func open(_ link: DeepLink) throws {
        context.record(.linkOpen, coordinator: path, detail: ["link": .string(link.description)])
        unwind()
        if let tabs = context.state.tabs, tabs.selected != link.tab { selectTab(link.tab) }
        switch link {
        case .photos, .purchases:
            break
        case .photo(let photoId):
            try tap(ClientAction(.selectPhoto, photoId: photoId))
        case .buy(let photoId):
            try tap(ClientAction(.selectPhoto, photoId: photoId))
            try tap(ClientAction(.buy))
        }
    }

    /// Every child coordinator finishes, innermost first (reason `link`), every modal stack is
    /// dismissed and every stack popped to its root: the selected tab's first, then the other
    /// tabs' (each on its own stack). The signed-in user stays signed in.
    private func unwind() {
        let roots: [Coordinator] = context.state.tabs.map { tabs in
            ([tabs.selected] + TabName.allCases.filter { $0 != tabs.selected }).compactMap(tabCoordinator)
        } ?? [self]
        for root in roots {
            context.onTab(root.model.tab) {
                for coordinator in root.subtree.dropFirst().reversed() { coordinator.finish(.link) }
                context.dismiss(downTo: 1, by: root.path)
                context.pop(stack: 0, toDepth: 1, by: root.path)
            }
        }
    }

    /// Delivers `action` to the owner of the top screen, as a client's action is delivered.
    private func tap(_ action: ClientAction) throws {
        guard let top = context.state.topScreen, context.state.availableActions().contains(action.name),
              let owner = subtree.first(where: { $0.id == top.owner }) else {
            throw SessionStateError(sessionID: context.sessionID, problem: "a link cannot \(action.name.rawValue) from \(context.state.topScreen?.screen.rawValue ?? "nothing")")
        }
        try owner.handle(action, on: top)
    }
}
