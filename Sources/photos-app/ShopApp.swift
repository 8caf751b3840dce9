import Foundation
import PhotosClient

/// The app: a loop of show the session, read a key, send the action it stands for.
final class ShopApp {
    let driver: NavigationDriver
    let terminal: Terminal
    let serverURL: URL
    /// The catalogue, by id (titles and prices for the screens, which carry photo ids).
    private var catalogue: [Int: Photo] = [:]
    /// The last outcome or error, shown under the screen.
    private var message = ""

    /// An app on the photosd at `serverURL`; with `resuming`, on the session of that id this app
    /// kept (`--session`).
    init(serverURL: URL, terminal: Terminal, resuming: String? = nil) {
        self.serverURL = serverURL
        self.kept = KeptSessions(resuming: resuming)
        self.driver = NavigationDriver(serverURL: serverURL, store: kept)
        self.terminal = terminal
    }

    /// Where the sessions this app started are kept (for `--session`).
    let kept: KeptSessions

    /// Runs the app on a new session (`layout`, `link`), or on the session `--session` named.
    func run(layout: Layout, link: String?) async throws {
        try await loadCatalogue()
        if let sessionID = kept.resuming {
            _ = try kept.load()  // a session this app never kept is one line, before any request
            _ = try await driver.resume()
            shown(sessionID)
            message = "Welcome back: the session is where you left it."
        } else {
            try await start(layout: layout, link: link)
            message = "Welcome. The server decides each screen; press a key shown below."
        }
        // Changes made on another device (or by an operator) show as they happen.
        let follower = follow()
        defer { follower.cancel() }
        defer {
            if let id = sessionIDShown {
                terminal.write("\r\nThe session stays on the server: photos-app --session \(id) resumes it.\r\n")
            }
        }
        while true {
            guard let session = await driver.session else { return }
            let size = terminal.size
            terminal.show(Rendering.render(session, catalogue: catalogue, server: serverURL, message: message, rows: size.rows, columns: size.columns))
            guard let key = terminal.key() else { return }
            if key == Terminal.redraw {
                // Drawn again: at a new size, or with a change made on another device.
                if let note = elsewhere.take() { message = note }
                continue
            }
            if key == UInt8(ascii: "q") { return }
            if key == UInt8(ascii: "r") {
                message = await reload()
                continue
            }
            guard let action = self.action(for: key, on: session) else {
                message = "No action on key \(Rendering.keyName(key)) here."
                continue
            }
            do {
                let step = try await driver.send(action)
                message = Rendering.describe(step, catalogue: catalogue)
            } catch {
                message = try await recover(from: error)
            }
        }
    }

    /// The line to show for `error`; a session the server ended (idle too long) is replaced by
    /// a new one first, and the line says so.
    private func recover(from error: any Error) async throws -> String {
        guard case .sessionExpired? = error as? NavigationError else { return Rendering.words(for: error) }
        _ = try await driver.startOver()
        if let id = await driver.sessionID { shown(id) }
        return "Your session ended after a long idle time; this is a new one."
    }

    /// The id of the session on show, once there is one.
    private var sessionIDShown: String?

    /// What the change feed brought since the screen was last drawn.
    private let elsewhere = ChangeNote()

    /// Follows the session's change feed: each change is noted and the screen drawn again
    /// (the driver has taken the new navigation already).
    private func follow() -> Task<Void, Never> {
        let feed = driver.changes()
        let note = elsewhere
        let catalogue = self.catalogue
        return Task {
            do {
                for try await change in feed {
                    note.set("Changed on another device. " + Rendering.whereNow(change.session, catalogue: catalogue))
                    Terminal.wakeUp()
                }
            } catch NavigationError.sessionExpired {
                // The next key says so, and starts a new session.
            } catch {
                note.set("No longer following changes made elsewhere: \(Rendering.words(for: error))")
                Terminal.wakeUp()
            }
        }
    }

    /// Notes the session on show, and what to say if a signal ends the app.
    private func shown(_ id: String) {
        sessionIDShown = id
        terminal.setFarewell("\r\nThe session stays on the server: photos-app --session \(id) resumes it.\r\n")
    }

    /// `r`: the catalogue and the session read again; says what changed, in a few words.
    private func reload() async -> String {
        let before = catalogue
        do {
            try await loadCatalogue()
            let commands = try await driver.refresh()
            let added = catalogue.count - before.count
            let changedPhotos = catalogue != before
            var words: [String] = []
            if added > 0 { words.append("\(added) new photo\(added == 1 ? "" : "s") in the catalogue.") }
            else if changedPhotos { words.append("The catalogue changed.") }
            if !commands.isEmpty, let session = await driver.session {
                words.append("The session changed elsewhere. " + Rendering.whereNow(session, catalogue: catalogue))
            }
            return words.isEmpty ? "Up to date: nothing changed." : words.joined(separator: " ")
        } catch {
            return (try? await recover(from: error)) ?? Rendering.words(for: error)
        }
    }

    /// Starts a session (the driver keeps it, so that `--session` can resume it).
    private func start(layout: Layout, link: String?) async throws {
        let session = try await driver.start(layout: layout, link: link)
        shown(session.id)
    }

    /// The action `key` stands for on the top screen, asking for what it needs (a photo's
    /// number, a link, the credentials); nil when the screen does not offer it.
    private func action(for key: UInt8, on session: Session) -> Action? {
        let offered = Set(session.actions)
        let character = Character(UnicodeScalar(key))
        if let digit = character.wholeNumberValue, offered.contains(.selectPhoto) {
            return Rendering.listed(session, catalogue: catalogue)[safe: digit - 1].map { .selectPhoto($0.id) }
        }
        switch character {
        case "B" where offered.contains(.buyPhoto):
            terminal.write("\nBuy which photo (1-9)? ")
            guard let digit = terminal.key().flatMap({ Character(UnicodeScalar($0)).wholeNumberValue }),
                  let photo = Rendering.listed(session, catalogue: catalogue)[safe: digit - 1] else { return nil }
            return .buyPhoto(photo.id)
        case "b" where offered.contains(.buy): return .buy
        case "i" where offered.contains(.signIn): return .signIn
        case "o" where offered.contains(.signOut): return .signOut
        case "h" where offered.contains(.back): return .back
        case "c" where offered.contains(.cancel): return .cancel
        case "t" where offered.contains(.showTerms): return .showTerms
        case "d" where offered.contains(.dismiss): return .dismiss
        case "p" where offered.contains(.selectTab): return .selectTab(.photos)
        case "u" where offered.contains(.selectTab): return .selectTab(.purchases)
        case "s" where offered.contains(.submit):
            terminal.write("\n")
            guard let username = terminal.line("Username: "), !username.isEmpty,
                  let password = terminal.line("Password (not shown): ", secret: true) else { return nil }
            return .submit(username: username, password: password)
        case "l":
            terminal.write("\n")
            guard let link = terminal.line("Link (e.g. /photos/3/buy): "), !link.isEmpty else { return nil }
            return .openLink(link)
        default: return nil
        }
    }

    /// Reads the whole catalogue, a page at a time.
    private func loadCatalogue() async throws(NavigationError) {
        do {
            try await readCatalogue()
        } catch {
            throw NavigationError(error)
        }
    }

    private func readCatalogue() async throws {
        var fresh: [Int: Photo] = [:]
        var after = 0
        while true {
            switch try await driver.client.listPhotos(query: .init(after: after, limit: 500)) {
            case .ok(let answer):
                let page = try answer.body.json
                for photo in page.photos { fresh[photo.id] = photo }
                guard let next = page.nextAfter else {
                    catalogue = fresh  // whole, or not at all
                    return
                }
                after = next
            default:
                throw NavigationError.server(status: 0, code: nil, message: "cannot read the catalogue from \(serverURL)")
            }
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}

/// A line for the next drawing, set by the change feed's task. `@unchecked Sendable`: `text`
/// is read and written only under `lock`.
final class ChangeNote: @unchecked Sendable {
    private let lock = NSLock()
    private var text: String?

    func set(_ new: String) { lock.withLock { text = new } }

    /// The line, once.
    func take() -> String? { lock.withLock { defer { text = nil }; return text } }
}
