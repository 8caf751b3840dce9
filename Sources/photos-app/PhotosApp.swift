import ArgumentParser
import Foundation
import PhotosClient

/// `photos-app`: the photo shop in a terminal, on PhotosClient only. The server decides every
/// screen; the app shows the top one, the stacks as breadcrumbs with modal sheets over them,
/// the tab bar, and the actions the server allows as keys.
@main
struct PhotosApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photos-app",
        abstract: "The photo shop in a terminal, driven by photosd.",
        discussion: """
            Keys: the ones shown under each screen; r reads the catalogue and the session again. \
            A change made on another device shows as it happens. q (or Ctrl-C) quits; the session \
            stays on the server, and --session ID resumes it, also after the app was killed (the \
            app keeps each session it starts, with its secret, in \
            $XDG_STATE_HOME/photos-app/sessions/ID.json, else ~/.local/state/photos-app/sessions, \
            mode 0600).
            """)

    @Option(help: "The photosd to use.")
    var url = "http://127.0.0.1:8080"

    @Flag(help: "Start a session with a tab bar (photos, purchases).")
    var tabs = false

    @Option(help: "Start at a deep link: /photos, /photos/3, /photos/3/buy, or /purchases with --tabs.")
    var link: String?

    @Option(help: "Resume a session this app started (its id, as printed when the app quit).")
    var session: String?

    func validate() throws {
        guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https", parsed.host != nil else {
            throw ValidationError("--url must be an http:// or https:// URL, not \(url)")
        }
        if let link, !link.hasPrefix("/") { throw ValidationError("--link must be a path such as /photos/3, not \(link)") }
        if session != nil && (tabs || link != nil) { throw ValidationError("--session resumes a session as it is: leave out --tabs and --link") }
    }

    func run() async throws {
        guard let serverURL = URL(string: url) else { throw ValidationError("--url \(url) is not a URL") }
        let app = ShopApp(serverURL: serverURL, terminal: Terminal(), resuming: session)
        defer { app.terminal.restore() }
        do {
            try await app.run(layout: tabs ? .tabs : .stack, link: link)
        } catch {
            app.terminal.restore()
            FileHandle.standardError.write(Data("photos-app: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}
