// The examples of docs/client.md, compiled and run here (ReadmeExampleTests checks that
// docs/client.md shows exactly this code, and drives it through races with a second device;
// ClientPackageTests builds it in an app of its own).
// README example begin
import Foundation
import PhotosClient

/// A stack app's root coordinator: it owns the navigation and does what the server decides,
/// command by command (`follow` is where UIKit pushes, pops and presents, animated).
@MainActor
final class ShopCoordinator {
    let driver: NavigationDriver
    /// The screens on show: one path per stack, the root's first, then each sheet's.
    private(set) var paths: [[Screen]] = []
    /// What to tell the user (nil after the next request that succeeds).
    private(set) var lastError: NavigationError?

    /// `store`: where the session outlives the app (the Keychain on iOS; a 0600 file elsewhere).
    init(server: URL, store: (any SessionStore)? = nil) {
        driver = NavigationDriver(serverURL: server, store: store)
    }

    func start(at link: String? = nil) async throws {
        let session = try await driver.start(link: link)
        paths = session.navigation.stacks.map(\.screens)
        lastError = nil
    }

    /// At launch: the kept session on the screens it had, else (none kept, or it ended) a new one.
    func launch() async throws {
        paths = [[]]
        do {
            try await driver.resume().forEach(follow)
        } catch {
            switch error {
            case .noSession, .unauthorized, .sessionExpired: try await driver.startOver().forEach(follow)
            default: throw error
            }
        }
        lastError = nil
    }

    /// What a screen's handler calls: didSelectPhoto, didBuyPhoto, didSignIn, didCancel, …
    func perform(_ action: Action) async {
        do {
            try await driver.send(action).commands.forEach(follow)
            lastError = nil
        } catch {
            recover(from: error)
        }
    }

    /// The user swiped back: the system popped already, so the driver leaves that pop out.
    func userSwipedBack() async {
        paths[paths.count - 1].removeLast()
        do {
            try await driver.userDid(.back).commands.forEach(follow)
            lastError = nil
        } catch {
            recover(from: error)
            if case .versionConflict = error { return }
            // Refused: put the screen back (the driver knows what the app shows).
            if let commands = try? await driver.refresh() { commands.forEach(follow) }
        }
    }

    private func recover(from error: NavigationError) {
        lastError = error  // .invalidCredentials: the session stays on sign-in
        // Changed on another device: the driver caught up; show the session as it is there.
        if case .versionConflict(_, let caughtUp) = error { caughtUp.forEach(follow) }
    }

    private func follow(_ command: NavigationCommand) {
        switch command {
        case .push(let screen): paths[paths.count - 1].append(screen)
        case .pop(let count): paths[paths.count - 1].removeLast(count)
        case .popToRoot: paths[paths.count - 1].removeLast(paths[paths.count - 1].count - 1)
        case .replaceTop(let screen): paths[paths.count - 1][paths[paths.count - 1].count - 1] = screen
        case .update(let screen):  // the same view, new values: the top, or the same screen below it
            let index = paths[paths.count - 1].lastIndex { $0.isSameScreen(as: screen) } ?? paths[paths.count - 1].count - 1
            paths[paths.count - 1][index] = screen
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

/// A tabs app: one stack per tab and sheets over them, each set in one go from what the driver
/// shows (UIKit: `selectedIndex` and `setViewControllers(_:animated:)`; SwiftUI: the `TabView`
/// selection and each `NavigationStack`'s path — or `NavigationModel`, below).
@MainActor
final class TabsCoordinator {
    let driver: NavigationDriver
    private(set) var selected: Tab?
    private(set) var tabPaths: [Tab: [Screen]] = [:]
    private(set) var sheets: [[Screen]] = []
    private(set) var lastError: NavigationError?

    init(server: URL) {
        driver = NavigationDriver(serverURL: server)
    }

    func start() async throws {
        show(try await driver.start(layout: .tabs).navigation)
    }

    func perform(_ action: Action) async {
        do {
            show(try await driver.send(action).target)
            lastError = nil
        } catch {
            lastError = error
            show(await driver.shown)  // after a conflict: the session as it is now
        }
    }

    /// The user tapped a tab: the tab bar switched already; the server follows.
    func userSelected(_ tab: Tab) async {
        selected = tab
        do {
            show(try await driver.userDid(.selectTab(tab)).target)
            lastError = nil
        } catch {
            lastError = error  // e.g. refused under a sheet
            if case .versionConflict = error {} else { _ = try? await driver.refresh() }
            show(await driver.shown)  // the tab the server has, back on screen
        }
    }

    private func show(_ target: NavigationState) {
        selected = target.selectedTab
        // Every tab the server has, also one this app does not know (shown with a fallback).
        tabPaths = target.tabs
        if let selected { tabPaths[selected] = target.root }
        sheets = target.modals.map(\.screens)
    }
}

#if canImport(SwiftUI)
import SwiftUI

/// SwiftUI binds to a `NavigationModel`: the server pushes, the system's own gestures (swipe-
/// back, swipe-down, a tab tapped) are written into the model and sent as `userDid`.
@available(iOS 17, macOS 15, *)
struct ShopView: View {
    @State var model: NavigationModel

    var body: some View {
        StackLevel(model: model, level: 0)
            .task { await model.follow() }  // changes made elsewhere, while the view is on screen
    }
}

/// One stack — the root's (level 0) or a sheet's — and the sheet over it: SwiftUI presents one
/// sheet per view, so a sheet over a sheet (the terms over a purchase presented modally) is
/// the `.sheet` of the level below's sheet.
@available(iOS 17, macOS 15, *)
struct StackLevel: View {
    let model: NavigationModel
    let level: Int

    var body: some View {
        NavigationStack(path: Binding(get: { model.path(at: level) }, set: { model.setPath($0, at: level) })) {
            screen(model.root(at: level))
                .navigationDestination(for: Screen.self) { screen($0) }
        }
        .sheet(isPresented: Binding(get: { model.isSheetShown(over: level) }, set: { if !$0 { model.sheetDismissed(over: level) } })) {
            StackLevel(model: model, level: level + 1)
        }
    }

    @ViewBuilder func screen(_ screen: Screen?) -> some View {
        VStack {
            Text(screen.map(ShopCoordinator.title(of:)) ?? "…")
            ForEach(model.session?.actions ?? [], id: \.self) { action in
                if action == .back { Button("Back") { Task { await model.send(.back) } } }
            }
            if let error = model.lastError { Text(error.description).foregroundStyle(.red) }
        }
    }
}
#endif
// README example end
