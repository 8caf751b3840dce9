import Foundation
import PhotosClient

/// What photos-app draws: text only, from the session and the catalogue.
enum Rendering {
    /// The whole screen.
    static func render(_ session: Components.Schemas.Session, catalogue: [Int: Components.Schemas.Photo], server: URL, message: String) -> String {
        var lines: [String] = []
        let who = session.user.map { "signed in as \($0.value1.username)" } ?? "signed out"
        lines.append("photos-app · \(server.absoluteString) · session \(session.id.prefix(8))… v\(session.version) · \(who)")
        if let tabs = session.tabs {
            lines.append("Tabs: " + tabs.items.map { $0.tab == tabs.selected ? "[\(title(of: $0.tab))]" : " \(title(of: $0.tab)) " }.joined(separator: "  "))
        }
        for (index, stack) in session.navigation.enumerated() {
            let path = stack.screens.map { name(of: $0, catalogue: catalogue) }.joined(separator: " › ")
            lines.append(index == 0 ? "Stack: \(path)" : String(repeating: "  ", count: index) + "└ Sheet: \(path)")
        }
        lines.append("")
        if let top = session.navigation.last?.screens.last {
            lines.append("── \(name(of: top, catalogue: catalogue)) ──")
            lines += body(of: top, session: session, catalogue: catalogue)
        }
        lines.append("")
        lines.append("Keys: " + keys(for: session.top?.actions ?? []).joined(separator: " · "))
        lines.append("")
        lines.append(message)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The photos a screen lists, in the order their numbers are shown.
    static func listed(_ session: Components.Schemas.Session, catalogue: [Int: Components.Schemas.Photo]) -> [Components.Schemas.Photo] {
        guard let top = session.navigation.last?.screens.last else { return [] }
        switch top.screen {
        case .photos: return catalogue.values.sorted { $0.id < $1.id }
        case .purchases: return top.photos ?? []
        default: return []
        }
    }

    private static func body(of screen: Screen, session: Components.Schemas.Session, catalogue: [Int: Components.Schemas.Photo]) -> [String] {
        switch screen.screen {
        case .photos, .purchases:
            let photos = listed(session, catalogue: catalogue)
            if photos.isEmpty { return ["  (nothing here yet)"] }
            return photos.prefix(9).enumerated().map { "  \($0.offset + 1)  \($0.element.title)  \(price($0.element.priceCents))" }
                + (photos.count > 9 ? ["  … and \(photos.count - 9) more"] : [])
        case .photo, .buy:
            let photo = screen.photoId.flatMap { catalogue[$0] }
            var lines = ["  \(photo?.title ?? "Photo \(screen.photoId ?? 0)")", "  Price: \(photo.map { price($0.priceCents) } ?? "?")"]
            if let owned = screen.purchased { lines.append("  Owned: \(owned ? "yes" : "no")") }
            if screen.screen == .buy { lines.append("  Press b to buy it.") }
            return lines
        case .signIn: return ["  Sign in to continue (s): you will be asked for your username and password."]
        case .terms: return ["  Terms of sale: photos are yours to keep; prices include tax."]
        }
    }

    private static func keys(for actions: [Components.Schemas.ActionName]) -> [String] {
        var keys: [String] = []
        for action in actions {
            switch action {
            case .selectPhoto: keys.append("1-9 open a photo")
            case .buyPhoto: keys.append("B buy a photo")
            case .signIn: keys.append("i sign in")
            case .signOut: keys.append("o sign out")
            case .buy: keys.append("b buy")
            case .back: keys.append("h back")
            case .submit: keys.append("s enter username and password")
            case .cancel: keys.append("c cancel")
            case .showTerms: keys.append("t terms")
            case .dismiss: keys.append("d dismiss")
            case .selectTab: keys.append("p/u photos/purchases tab")
            case .openLink: break
            }
        }
        return keys + ["l open a link", "r refresh", "q quit"]
    }

    static func name(of screen: Screen, catalogue: [Int: Components.Schemas.Photo]) -> String {
        let title = screen.photoId.flatMap { catalogue[$0]?.title } ?? "Photo \(screen.photoId ?? 0)"
        switch screen.screen {
        case .photos: return "Photos"
        case .photo: return title
        case .signIn: return "Sign in"
        case .buy: return "Buy \(title)"
        case .terms: return "Terms"
        case .purchases: return "Purchases"
        }
    }

    static func title(of tab: Tab) -> String { tab == .photos ? "Photos" : "Purchases" }

    static func price(_ cents: Int) -> String { "$\(cents / 100).\(String(format: "%02d", cents % 100))" }

    /// A step in a few words.
    static func describe(_ step: NavigationDriver.Step) -> String {
        let outcome = switch step.outcome {
        case .purchased: "Purchased. "
        case .alreadyOwned: "You own it already. "
        case .signedIn: "Signed in. "
        case .signedOut: "Signed out. "
        default: ""
        }
        return outcome + (step.commands.isEmpty ? "" : "(\(describe(step.commands)))")
    }

    static func describe(_ commands: [NavigationCommand]) -> String {
        commands.map { command in
            switch command {
            case .push(let screen): "push \(screen.screen.rawValue)"
            case .pop(let count): "pop \(count)"
            case .popToRoot: "pop to root"
            case .present(let stack): "present \(stack.screens.map(\.screen.rawValue).joined(separator: ","))"
            case .dismiss: "dismiss"
            case .selectTab(let tab): "tab \(tab.rawValue)"
            case .replaceTop(let screen): "replace with \(screen.screen.rawValue)"
            }
        }.joined(separator: ", ")
    }

    /// An error in the app's words.
    static func words(for error: any Error) -> String {
        guard let error = error as? NavigationError else { return "Error: \(error)" }
        switch error {
        case .invalidCredentials: return "Wrong username or password."
        case .tooManyAttempts(let retryAfter, _): return "Too many attempts; try again in \(retryAfter ?? 60) s."
        case .actionNotAvailable(let allowed, _): return "Not here. Allowed: \(allowed.joined(separator: ", "))."
        case .versionConflict: return "The session changed elsewhere; press r to refresh."
        default: return "Error: \(error)"
        }
    }

    static func keyName(_ key: UInt8) -> String {
        (32..<127).contains(key) ? "'\(Character(UnicodeScalar(key)))'" : "\(key)"
    }
}
