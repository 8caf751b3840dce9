import Foundation
import PhotosClient

/// What photos-app draws: text only, from the session and the catalogue, fitted to the window.
enum Rendering {
    /// The whole screen, at most `rows` lines of at most `columns` characters: the header, the
    /// tab bar and the stacks first, the keys and the message last; a screen's body is cut
    /// (with a `…` line) when the window is too small for all of it.
    static func render(_ session: Session, catalogue: [Int: Photo], server: URL, message: String, rows: Int = 24, columns: Int = 80) -> String {
        var head: [String] = []
        let who = session.user.map { "signed in as \($0.username)" } ?? "signed out"
        head.append("photos-app · \(server.absoluteString) · session \(session.id.prefix(8))… v\(session.version) · \(who)")
        if let selected = session.navigation.selectedTab {
            let tabs = session.navigation.tabs.keys.sorted { $0.rawValue < $1.rawValue }
            head.append("Tabs: " + tabs.map { $0 == selected ? "[\(title(of: $0))]" : " \(title(of: $0)) " }.joined(separator: "  "))
        }
        for (index, stack) in session.navigation.stacks.enumerated() {
            let path = stack.screens.map { name(of: $0, catalogue: catalogue) }.joined(separator: " › ")
            head.append(index == 0 ? "Stack: \(path)" : String(repeating: "  ", count: index) + "└ Sheet: \(path)")
        }
        var body: [String] = [""]
        if let top = session.top {
            body.append("── \(name(of: top, catalogue: catalogue)) ──")
            body += self.body(of: top, session: session, catalogue: catalogue)
        }
        let foot = ["", "Keys: " + keys(for: session.actions).joined(separator: " · "), "", message]
        let room = max(rows - 1 - head.count - foot.count, 0)
        if body.count > room { body = Array(body.prefix(max(room - 1, 0))) + (room > 0 ? ["  …"] : []) }
        let lines = (head + body + foot).map { fit($0, columns) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `line` cut to `columns` characters (with `…`).
    static func fit(_ line: String, _ columns: Int) -> String {
        line.count <= columns ? line : String(line.prefix(max(columns - 1, 0))) + "…"
    }

    /// The photos a screen lists, in the order their numbers are shown.
    static func listed(_ session: Session, catalogue: [Int: Photo]) -> [Photo] {
        guard let top = session.top else { return [] }
        switch top.name {
        case .photos: return catalogue.values.sorted { $0.id < $1.id }
        case .purchases: return top.photos ?? []
        default: return []
        }
    }

    private static func body(of screen: Screen, session: Session, catalogue: [Int: Photo]) -> [String] {
        switch screen.name {
        case .photos, .purchases:
            let photos = listed(session, catalogue: catalogue)
            if photos.isEmpty { return ["  (nothing here yet)"] }
            return photos.prefix(9).enumerated().map { "  \($0.offset + 1)  \($0.element.title)  \(price($0.element.priceCents))" }
                + (photos.count > 9 ? ["  … and \(photos.count - 9) more"] : [])
        case .photo, .buy:
            let photo = screen.photoId.flatMap { catalogue[$0] }
            var lines = ["  \(photo?.title ?? "Photo \(screen.photoId ?? 0)")", "  Price: \(photo.map { price($0.priceCents) } ?? "not in the catalogue (press r to reload it)")"]
            if screen.purchased == true {
                lines.append(screen.name == .buy ? "  You own this photo already: buying it again charges nothing." : "  You own this photo.")
            } else if screen.name == .buy {
                lines.append("  Press b to buy it.")
            }
            return lines
        case .signIn: return ["  Sign in to continue (s): you will be asked for your username and password."]
        case .terms: return ["  Terms of sale: photos are yours to keep; prices include tax."]
        case .unknown(let name):
            // A screen a newer photosd shows: this app cannot draw it, but can go on.
            return ["  This screen (\(name)) needs a newer photos-app. The keys below still work."]
        }
    }

    /// The keys for the actions the top screen offers (`Session.actions` holds only actions
    /// this client knows).
    private static func keys(for actions: [ActionName]) -> [String] {
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
            case .openLink, .unknown: break
            }
        }
        return keys + ["l open a link", "r reload", "q quit"]
    }

    static func name(of screen: Screen, catalogue: [Int: Photo]) -> String {
        let title = screen.photoId.flatMap { catalogue[$0]?.title } ?? "Photo \(screen.photoId ?? 0)"
        switch screen.name {
        case .photos: return "Photos"
        case .photo: return title
        case .signIn: return "Sign in"
        case .buy: return "Buy \(title)"
        case .terms: return "Terms"
        case .purchases: return "Purchases"
        case .unknown(let name): return name
        }
    }

    static func title(of tab: Tab) -> String { tab == .photos ? "Photos" : "Purchases" }

    static func price(_ cents: Int) -> String { "$\(cents / 100).\(String(format: "%02d", cents % 100))" }

    /// A step in the user's words: what happened, and where they are now.
    static func describe(_ step: NavigationDriver.Step, catalogue: [Int: Photo]) -> String {
        let outcome = switch step.outcome {
        case .purchased: "Purchased — it is yours. "
        case .alreadyOwned: "You own it already; nothing was charged. "
        case .signedIn: "Signed in. "
        case .signedOut: "Signed out. "
        case .signInFailed: "Wrong username or password. "
        case .rejected: "That did not work here. "
        default: ""
        }
        return outcome + whereNow(step.session, catalogue: catalogue)
    }

    /// `Now: Buy Snow at night.`
    static func whereNow(_ session: Session, catalogue: [Int: Photo]) -> String {
        session.top.map { "Now: \(name(of: $0, catalogue: catalogue))." } ?? ""
    }

    /// An error in the app's words.
    static func words(for error: any Error) -> String {
        guard let error = error as? NavigationError else { return "Something went wrong: \(error)" }
        switch error {
        case .invalidCredentials: return "Wrong username or password."
        case .tooManyAttempts(let retryAfter, _): return "Too many attempts; try again in \(retryAfter ?? 60) seconds."
        case .actionNotAvailable: return "You cannot do that on this screen."
        case .versionConflict: return "This session changed on another device; you now see it as it is there."
        case .transport: return "Cannot reach the shop; check the connection and try again."
        case .unavailable: return "The shop cannot take that right now; try again in a moment."
        case .sessionExpired: return "Your session ended."
        case .cancelled: return "Cancelled."
        case .undecodable: return "This app cannot read the shop's answer (is the server newer? update the app): \(error)"
        default: return "Something went wrong: \(error)"
        }
    }

    static func keyName(_ key: UInt8) -> String {
        (32..<127).contains(key) ? "'\(Character(UnicodeScalar(key)))'" : "\(key)"
    }
}
