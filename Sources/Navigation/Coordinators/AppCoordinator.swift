import PhotosModel

/// The coordinator that runs the content screens: the photos list, photo detail, the purchases
/// list, modal sign-in, sign-out, and starting purchase flows. In the stack layout that is the
/// app coordinator itself (the sample's `MainCoordinator`); in the tabs layout, each tab's.
class ContentCoordinator: Coordinator {
    override func handle(_ action: ClientAction, on screen: ScreenState) throws {
        switch (screen.screen, action.name) {
        case (.photos, .selectPhoto):
            // didSelectPhoto
            let photoId = try context.existingPhoto(action.photoId)
            context.push(ScreenState(.photo, photoId: photoId, owner: id), by: path)
        case (.purchases, .selectPhoto):
            // Only a photo the user owns is on this list.
            let photoId = try ownedPhoto(action.photoId)
            context.push(ScreenState(.photo, photoId: photoId, owner: id), by: path)
        case (.photos, .buyPhoto):
            // didBuyPhoto from the list: the vertical purchase flow.
            let photoId = try context.existingPhoto(action.photoId)
            startBuy(photoId: photoId, fromPhotoScreen: false)
        case (.photo, .buy):
            // didBuyPhoto from the detail screen: the horizontal purchase flow on this stack, or
            // a sheet over it where an experiment on buy.presentation says so.
            startBuy(photoId: screen.photoId ?? 0, fromPhotoScreen: true)
        case (.photos, .signIn), (.purchases, .signIn):
            context.present(ScreenState(.signIn, owner: id), by: path)
        case (.photos, .signOut):
            context.signOut(reason: "signOut")
        case (.signIn, .submit):
            // didSignIn on the coordinator's own modal sign-in: dismiss on success, stay on failure.
            switch context.credentialCheck {
            case .valid(let user)?:
                try context.signIn(user)
                context.dismiss(downTo: context.state.stacks.count - 1, by: path)
            default:
                context.signInFailed()
            }
        case (.signIn, .cancel):
            context.dismiss(downTo: context.state.stacks.count - 1, by: path)
        default:
            break
        }
    }

    private func ownedPhoto(_ photoId: Int64?) throws -> Int64 {
        guard let photoId, context.owns(photoId) else {
            throw PhotosError.notFound("no purchased photo with id \(photoId ?? 0)")
        }
        return photoId
    }

    /// Starts a purchase flow, taking the variation points it meets: its presentation (from a
    /// photo's screen only; from the list it is always modal), when a signed-out user signs in,
    /// whether the terms come first.
    private func startBuy(photoId: Int64, fromPhotoScreen: Bool) {
        var points: [VariationPoint] = fromPhotoScreen ? [.buyPresentation] : []
        if context.state.user == nil { points.append(.signInWhen) }
        points.append(.termsRequired)
        let (values, exposures) = context.take(points)
        let shown = BuyPresentation(named: values[BuyPresentation.point.rawValue])
        let presentation: FlowPresentation = fromPhotoScreen && shown == .push ? .push : .modal
        let buyFlow = BuyFlow(presentation: presentation, photoId: photoId, variants: values, beginningOn: context.state.stacks)
        let child = CoordinatorState(id: newChildID(.buy), role: .buy(buyFlow))
        let flow = BuyCoordinator(id: child.id, flow: buyFlow, path: childPath(child), context: context)
        flow.exposures = exposures
        pushCoordinator(flow)
    }
}

/// The root coordinator. In the stack layout it runs the content screens itself; in the tabs
/// layout it is the tab bar: it starts one `TabCoordinator` per tab and switches between them.
final class AppCoordinator: ContentCoordinator {
    override func start() {
        guard context.state.sessionLayout == .tabs else {
            context.push(ScreenState(.photos, owner: id), by: path)
            return
        }
        for tab in TabName.allCases {
            let child = CoordinatorState(id: tab.coordinatorID, role: .tab(tab))
            // Each tab starts on its own stack, selected or not.
            context.onTab(tab) {
                pushCoordinator(TabCoordinator(model: child, path: childPath(child), context: context))
            }
        }
    }

    /// The coordinator of `tab`.
    func tabCoordinator(_ tab: TabName) -> Coordinator? {
        childCoordinators.first { $0.model.tab == tab }
    }

    /// `selectTab`: shows `tab` as it was left; the selected tab again pops it to its root,
    /// finishing the flows whose screens that pops (UIKit's behaviour).
    func selectTab(_ tab: TabName) {
        // Every tab has its coordinator for the whole session (an invariant the tests check).
        guard let tabPath = tabCoordinator(tab)?.path else { return }
        let reselected = context.state.tabs?.selected == tab
        context.selectTab(tab, by: tabPath)
        if reselected {
            context.pop(stack: 0, toDepth: 1, by: tabPath)
            finishDescendantsWithoutScreens(reason: .back)
        }
    }
}

/// One tab of the tabs layout: its root screen on its own stack, and the flows started there
/// as its children (`app/photos/buy`).
final class TabCoordinator: ContentCoordinator {
    override func start() {
        context.push(ScreenState(model.tab?.rootScreen ?? .photos, owner: id), by: path)
    }
}
