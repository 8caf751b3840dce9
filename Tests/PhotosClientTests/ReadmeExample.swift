import Foundation
import PhotosClient

// The examples of docs/client.md, compiled and run here (ReadmeExampleTests checks that
// docs/client.md shows exactly this code; ClientPackageTests builds it in an app of its own).
// README example begin
/// A stack app's root coordinator: it owns the navigation and does what the server decides,
/// command by command (`follow` is where UIKit pushes, pops and presents, animated).
@MainActor
final class ShopCoordinator {
    let driver: NavigationDriver
    /// The screens on show: one path per stack, the root's first, then each sheet's.
    private(set) var paths: [[Screen]] = []
    private(set) var lastError: NavigationError?

    init(server: URL) {
        driver = NavigationDriver(serverURL: server)
    }

    func start(at link: String? = nil) async throws {
        let session = try await driver.start(link: link)
        paths = session.navigation.stacks.map(\.screens)
    }

    /// What a screen's handler calls: didSelectPhoto, didBuyPhoto, didSignIn, didCancel, …
    func perform(_ action: Action) async {
        do {
            try await driver.send(action).commands.forEach(follow)
        } catch .versionConflict(_, let caughtUp) {
            caughtUp.forEach(follow)  // changed on another device: now shown as it is there
        } catch {
            lastError = error  // .invalidCredentials: the session stays on sign-in
        }
    }

    /// The user swiped back: the system popped already, so the driver leaves that pop out.
    func userSwipedBack() async {
        paths[paths.count - 1].removeLast()
        do {
            try await driver.userDid(.back).commands.forEach(follow)
        } catch {
            (try? await driver.refresh())?.forEach(follow)  // refused: put the screen back
        }
    }

    private func follow(_ command: NavigationCommand) {
        switch command {
        case .push(let screen): paths[paths.count - 1].append(screen)
        case .pop(let count): paths[paths.count - 1].removeLast(count)
        case .popToRoot: paths[paths.count - 1].removeLast(paths[paths.count - 1].count - 1)
        case .replaceTop(let screen), .update(let screen):  // update: same view, new values
            paths[paths.count - 1][paths[paths.count - 1].count - 1] = screen
        case .present(let stack): paths.append(stack.screens)
        case .dismiss: paths.removeLast()
        case .selectTab: break  // tabs: see TabsCoordinator
        }
    }

    /// A screen's title; a screen a newer server shows gets the app's fallback.
    static func title(of screen: Screen) -> String {
        switch screen.name {
        case .photos: "Photos"
        case .photo: "Photo \(screen.photoId ?? 0)"
        case .buy: screen.purchased == true ? "Yours already" : "Buy"
        case .signIn: "Sign in"
        case .terms: "Terms"
        case .purchases: "Purchases"
        case .unknown: "Update the app to see this"
        }
    }
}

/// A tabs app: one stack per tab and sheets over them, each set in one go from the target
/// (UIKit: `selectedIndex` and `setViewControllers(_:animated:)`; SwiftUI: the `TabView`
/// selection and each `NavigationStack`'s path).
@MainActor
final class TabsCoordinator {
    let driver: NavigationDriver
    private(set) var selected: Tab?
    private(set) var tabPaths: [Tab: [Screen]] = [:]
    private(set) var sheets: [[Screen]] = []

    init(server: URL) {
        driver = NavigationDriver(serverURL: server)
    }

    func start() async throws {
        show(try await driver.start(layout: .tabs).navigation)
    }

    func perform(_ action: Action) async throws {
        show(try await driver.send(action).target)
    }

    /// The user tapped a tab: the tab bar switched already; the server follows.
    func userSelected(_ tab: Tab) async throws {
        selected = tab
        show(try await driver.userDid(.selectTab(tab)).target)
    }

    private func show(_ target: NavigationState) {
        selected = target.selectedTab
        for tab in [Tab.photos, .purchases] { tabPaths[tab] = target.screens(of: tab) }
        sheets = target.modals.map(\.screens)
    }
}
// README example end
