import PhotosCore

/// The root coordinator: the photos list, photo detail, modal sign-in, sign-out, and starting
/// purchase flows (the sample's `MainCoordinator`).
final class AppCoordinator: Coordinator {
    override func start() {
        context.push(ScreenState(.photos, owner: id), by: path)
    }

    override func handle(_ action: ClientAction, on screen: ScreenState) throws {
        switch (screen.screen, action.name) {
        case (.photos, .selectPhoto):
            // didSelectPhoto
            let photoId = try existingPhoto(action.photoId)
            context.push(ScreenState(.photo, photoId: photoId, owner: id), by: path)
        case (.photos, .buyPhoto):
            // didBuyPhoto from the list: the vertical purchase flow.
            let photoId = try existingPhoto(action.photoId)
            startBuy(photoId: photoId, presentation: .modal)
        case (.photo, .buy):
            // didBuyPhoto from the detail screen: the horizontal purchase flow, on this stack.
            startBuy(photoId: screen.photoId ?? 0, presentation: .push)
        case (.photos, .signIn):
            context.present(ScreenState(.signIn, owner: id), by: path, presenter: id)
        case (.photos, .signOut):
            try context.signOut(reason: "signOut")
        case (.signIn, .submit):
            // didSignIn on the app's own modal sign-in: dismiss on success, stay on failure.
            switch context.credentialCheck {
            case .valid(let user)?:
                try context.signIn(user)
                context.dismiss(downTo: context.state.stacks.count - 1, by: path)
            default:
                context.signInFailed(username: action.username)
            }
        case (.signIn, .cancel):
            context.dismiss(downTo: context.state.stacks.count - 1, by: path)
        default:
            break
        }
    }

    private func existingPhoto(_ photoId: Int64?) throws -> Int64 {
        guard let photoId, try CatalogService.photo(id: photoId, on: context.connection) != nil else {
            throw PhotosError.notFound("no photo with id \(photoId ?? 0)")
        }
        return photoId
    }

    private func startBuy(photoId: Int64, presentation: FlowPresentation) {
        let child = CoordinatorState(
            kind: .buy, id: newChildID(.buy), presentation: presentation, photoId: photoId,
            stackIndex: nil, initialDepth: nil, children: [])
        pushCoordinator(BuyCoordinator(model: child, path: path + "/buy", context: context))
    }
}
