import Foundation
import PhotosClient

// The example of docs/client.md ("Building an app on photosd"), compiled and run here (ReadmeExampleTests
// checks that docs/client.md shows exactly this code).
// README example begin
/// The app's root coordinator: it owns the navigation and does what the server decides.
/// `follow` is where a UIKit app calls its `UINavigationController` (push, pop, present,
/// dismiss, set the tab); a SwiftUI app edits the `NavigationStack` path it binds.
@MainActor
final class ShopCoordinator {
    let driver: NavigationDriver
    /// The screens on show: one path per stack, modal stacks last.
    private(set) var paths: [[Screen]] = []
    private(set) var lastError: NavigationError?

    init(server: URL) {
        driver = NavigationDriver(serverURL: server)
    }

    func start(at link: String? = nil) async throws {
        let session = try await driver.start(link: link)
        paths = session.navigation.map(\.screens)
    }

    /// What a screen's handler calls: didSelectPhoto, didBuyPhoto, didSignIn, didCancel, …
    func perform(_ action: Action) async {
        do {
            let step = try await driver.send(action)
            step.commands.forEach(follow)
        } catch .invalidCredentials {
            lastError = .invalidCredentials(message: "wrong username or password")  // stay on sign-in
        } catch .versionConflict {
            // Changed elsewhere (another device, an operator): catch up, then let the user act.
            (try? await driver.refresh())?.forEach(follow)
        } catch {
            lastError = error
        }
    }

    private func follow(_ command: NavigationCommand) {
        switch command {
        case .push(let screen): paths[paths.count - 1].append(screen)
        case .pop(let count): paths[paths.count - 1].removeLast(count)
        case .popToRoot: paths[paths.count - 1].removeLast(paths[paths.count - 1].count - 1)
        case .replaceTop(let screen): paths[paths.count - 1][paths[paths.count - 1].count - 1] = screen
        case .present(let stack): paths.append(stack.screens)
        case .dismiss: paths.removeLast()
        case .selectTab: break  // a tabs session: see NavigationState.apply for the whole model
        }
    }
}
// README example end
