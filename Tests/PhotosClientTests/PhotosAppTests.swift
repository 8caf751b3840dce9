import Foundation
import OpenAPIURLSession
import PhotosClient
import PhotosTestSupport
import PhotosdProcess
import Testing

/// photos-app in a real terminal (tmux: send-keys, capture-pane) against a real photosd.
@Suite("photos-app in tmux", .serialized)
struct PhotosAppTests {
    /// One tmux session running photos-app with `arguments`.
    final class Pane {
        /// A tmux server of this pane's own (`-L`), ended with it.
        let socket = "photos-app-test-\(UUID().uuidString.prefix(8))"
        let name = "app"

        init(_ arguments: [String], environment: [String: String] = [:], then after: String = "sleep 30") throws {
            let assignments = environment.map { "\($0.key)=\($0.value)" }.sorted()
            let command = (["env"] + assignments + [BuiltProducts.binDirectory + "/photos-app"] + arguments).map { "'\($0)'" }.joined(separator: " ")
            // The shell stays a while after the app ends, so the pane keeps what it printed last.
            try tmux(["new-session", "-d", "-s", name, "-x", "110", "-y", "32", command + "; " + after])
        }

        /// Runs tmux on this pane's server; its output is read only for `capture-pane`.
        @discardableResult
        func tmux(_ arguments: [String], capture: Bool = false) throws -> String {
            // tmux from PATH, through bash. The child gets descriptors 0–2 only (`spawnProcess`):
            // the tmux server that `new-session` forks holds no pipe of ours open.
            let output = try ChildProcess.pipe()
            let process: ChildProcess
            do {
                process = try spawnProcess("/bin/bash", ["-c", #"exec tmux "$@""#, "tmux", "-L", socket] + arguments, stdout: capture ? output.write : nil)
            } catch {
                Glibc.close(output.read)
                Glibc.close(output.write)
                throw error
            }
            Glibc.close(output.write)
            let data = FileHandle(fileDescriptor: output.read, closeOnDealloc: true).readDataToEndOfFile()
            let status = process.waitForExit()
            #expect(status == 0, "tmux \(arguments) exited \(status)")
            return String(decoding: data, as: UTF8.self)
        }

        /// What the pane shows now.
        func text() throws -> String { try tmux(["capture-pane", "-p", "-t", name], capture: true) }

        /// Everything the pane showed, its scrollback included.
        func history() throws -> String { try tmux(["capture-pane", "-p", "-S", "-", "-t", name], capture: true) }

        func keys(_ keys: String...) throws { try tmux(["send-keys", "-t", name] + keys) }

        /// On the sign-in screen: `s`, then alice's username and password at their prompts.
        func signIn(sourceLocation: SourceLocation = #_sourceLocation) async throws {
            try keys("s")
            try await waitFor("Username:", sourceLocation: sourceLocation)
            try keys(LiveServer.username, "Enter")
            try await waitFor("Password (not shown):", sourceLocation: sourceLocation)
            try keys(LiveServer.password, "Enter")
        }

        /// Waits (at most 30 s: a loaded machine) until the pane shows every one of `texts`.
        func waitFor(_ texts: String..., sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let shown = try text()
                if texts.allSatisfy(shown.contains) { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("the pane never showed \(texts):\n\(try text())", sourceLocation: sourceLocation)
            throw CancellationError()
        }

        /// Ends the app, its shell and the tmux server (`kill-server` alone leaves an app that
        /// waits on its terminal running).
        func close() {
            let pids = (try? tmux(["display-message", "-p", "-t", name, "#{pid} #{pane_pid}"], capture: true)) ?? ""
            let numbers = pids.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
            if numbers.count == 2 {
                kill(-numbers[1], SIGKILL)  // the pane's process group: its shell and the app
                kill(numbers[0], SIGKILL)
            }
            try? FileManager.default.removeItem(atPath: "/tmp/tmux-\(getuid())/\(socket)")
        }
    }

    @Test("a session the server ended (idle) is replaced by a new one, with a line saying why")
    func endedSession() async throws {
        let server = try await LiveServer(environment: ["PHOTOSD_SESSIONS_IDLE_EXPIRY_SECONDS": "1"])
        defer { server.stop() }
        let pane = try Pane(["--url", server.url.absoluteString])
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "1-9 open a photo")
        let first = try #require(try pane.text().firstMatch(of: /session (\S+)… v/).map { String($0.1) })
        try await Task.sleep(for: .milliseconds(1_500))
        try pane.keys("3")
        try await pane.waitFor("Your session ended after a long idle time; this is a new one.", "1-9 open a photo")
        // A new session, not the old one. (Not used further: with a 1 s expiry, a busy machine
        // could let it end too before the next key.)
        let second = try #require(try pane.text().firstMatch(of: /session (\S+)… v/).map { String($0.1) })
        #expect(second != first)
        try pane.keys("q")
    }

    @Test("sign in on the sign-in screen (password not shown) and buy a photo")
    func buyAfterSigningIn() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "tmux is missing: scripts/install-dependencies installs it")
        let server = try await LiveServer()
        defer { server.stop() }
        let pane = try Pane(["--url", server.url.absoluteString])
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "$2.50", "1-9 open a photo", "signed out")
        try pane.keys("3")
        try await pane.waitFor("Stack: Photos › Snow, at night", "Price: $3.00", "b buy")
        try pane.keys("b")
        try await pane.waitFor("── Sign in ──", "s enter username and password")
        try await pane.signIn()
        try await pane.waitFor("signed in as alice", "── Buy Snow, at night ──", "Signed in. Now: Buy Snow, at night.")
        try pane.keys("b")
        try await pane.waitFor("Purchased — it is yours. Now: Snow, at night.", "You own this photo.", "Stack: Photos › Snow, at night\n")
        // The buy screen of a photo alice owns says so.
        try pane.keys("b")
        try await pane.waitFor("── Buy Snow, at night ──", "You own this photo already: buying it again charges nothing.")
        try pane.keys("b")
        try await pane.waitFor("You own it already; nothing was charged.")
        #expect(!(try pane.history()).contains(LiveServer.password), "the password was shown")
        try pane.keys("q")

        // The purchase is the server's: alice's purchases hold photo 3.
        let client = Client(serverURL: server.url, transport: URLSessionTransport())
        guard case .ok(let signedIn) = try await client.signIn(body: .json(.init(username: LiveServer.username, password: LiveServer.password))) else {
            Issue.record("sign-in"); return
        }
        let token = try signedIn.body.json.token
        let authorized = Client(serverURL: server.url, transport: URLSessionTransport(), middlewares: [BearerTokenMiddleware(token: token)])
        guard case .ok(let purchases) = try await authorized.myPurchases() else { Issue.record("purchases"); return }
        #expect(try purchases.body.json.purchases.map(\.photoId) == [3])
    }

    @Test("unchanged under flow experiments: a sheet with buy first, the terms before buy, sign-in at the tap, then the purchase")
    func underExperiments() async throws {
        let server = try await LiveServer(experiments: [
            ("buy.presentation", "push:0,modal:1"), ("signIn.when", "atBuy:0,atPurchase:1"), ("terms.required", "no:0,yes:1"),
        ])
        defer { server.stop() }
        let pane = try Pane(["--url", server.url.absoluteString])
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "1-9 open a photo", "signed out")
        try pane.keys("3")
        try await pane.waitFor("Stack: Photos › Snow, at night", "b buy")
        try pane.keys("b")
        try await pane.waitFor("└ Sheet: Buy Snow, at night", "── Buy Snow, at night ──", "t terms")
        #expect(!(try pane.text()).contains("b buy"), "buy is offered only after the terms")
        try pane.keys("t")
        try await pane.waitFor("── Terms ──", "Terms of sale")
        try pane.keys("c")
        try await pane.waitFor("── Buy Snow, at night ──", "b buy")
        try pane.keys("b")
        try await pane.waitFor("── Sign in ──", "s enter username and password")
        try await pane.signIn()
        try await pane.waitFor("Purchased — it is yours.", "You own this photo.", "Stack: Photos › Snow, at night\n")
        try pane.keys("q")
    }

    @Test("--tabs and --link start there; tabs keep their stacks; a key not offered is refused; a sheet is drawn over its stack; a bad --url is one line and exit 64, an unreachable one exit 1")
    func flags() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let pane = try Pane(["--url", server.url.absoluteString, "--tabs", "--link", "/photos/2/buy"])
        defer { pane.close() }
        try await pane.waitFor("Tabs: [Photos]   Purchases", "Stack: Photos › Harbour in the rain › Sign in")
        try pane.keys("u")
        try await pane.waitFor("Tabs:  Photos   [Purchases]", "Stack: Purchases", "(nothing here yet)")
        try pane.keys("b")
        try await pane.waitFor("No action on key 'b' here.")
        try pane.keys("p")
        try await pane.waitFor("Tabs: [Photos]   Purchases", "Stack: Photos › Harbour in the rain › Sign in", "Now: Sign in.")
        try pane.keys("c")
        try await pane.waitFor("Stack: Photos › Harbour in the rain\n", "Now: Harbour in the rain.")
        try pane.keys("u")
        try await pane.waitFor("Stack: Purchases")
        try pane.keys("i")
        try await pane.waitFor("Stack: Purchases\n  └ Sheet: Sign in")

        let bad = try await runProcess(BuiltProducts.binDirectory + "/photos-app", ["--url", "ftp://nowhere"], in: NSTemporaryDirectory())
        #expect(bad.status == 64)
        #expect(bad.output.contains("--url must be an http:// or https:// URL"))
        let unreachable = try await runProcess(BuiltProducts.binDirectory + "/photos-app", ["--url", "http://127.0.0.1:1"], in: NSTemporaryDirectory())
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.hasPrefix("photos-app: cannot reach photosd at http://127.0.0.1:1"), "\(unreachable.stderr)")
        #expect(unreachable.stderr.split(separator: "\n").count == 1, "one line: \(unreachable.stderr)")
    }

    @Test("q leaves the session on the server and says how to resume it; --session resumes it where it was, with the secret the app kept (0600, never shown); also after the app was killed")
    func resume() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let environment = ["XDG_STATE_HOME": state.path]
        let pane = try Pane(["--url", server.url.absoluteString], environment: environment)
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "1-9 open a photo")
        try pane.keys("3")
        try await pane.waitFor("Stack: Photos › Snow, at night")
        try pane.keys("q")
        try await pane.waitFor("The session stays on the server: photos-app --session")
        let id = try #require(try pane.text().firstMatch(of: /--session (\S+) resumes it/).map { String($0.1) })
        let kept = state.file("photos-app/sessions/\(id).json")
        let stored = try JSONDecoder().decode(StoredSession.self, from: Data(contentsOf: URL(fileURLWithPath: kept)))
        let secret = stored.secret
        #expect(stored.id == id)
        #expect(secret.utf8.count == 43)
        // The session as of its last answer, for an app to show before the network answers.
        #expect(stored.session?.top == Screen(.photo, photoId: 3, purchased: false), "\(String(describing: stored.session))")
        let mode = (try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "the kept secret is readable by others: \(String(describing: mode))")
        #expect(!(try pane.history()).contains(secret), "the secret was shown")

        let again = try Pane(["--url", server.url.absoluteString, "--session", id], environment: environment)
        defer { again.close() }
        try await again.waitFor("Welcome back", "Stack: Photos › Snow, at night", "session \(id.prefix(8))… v")
        try again.keys("h")
        try await again.waitFor("Stack: Photos\n")
        try again.keys("q")

        // Killed (no farewell, nothing flushed on the way out): the session it kept at its start
        // resumes on the screen the server has.
        let killed = try Pane(["--url", server.url.absoluteString], environment: environment)
        try await killed.waitFor("Golden Gate at dusk", "1-9 open a photo")
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: state.file("photos-app/sessions")))
        try killed.keys("2")
        try await killed.waitFor("Stack: Photos › ")
        let screen = try #require(try killed.text().firstMatch(of: /Stack: Photos › ([^\n]+)/).map { String($0.1) })
        killed.close()
        let files = try FileManager.default.contentsOfDirectory(atPath: state.file("photos-app/sessions"))
        let newest = try #require(files.first { $0.hasSuffix(".json") && $0 != "\(id).json" }, "\(files) (before: \(before))")
        let killedID = String(newest.dropLast(".json".count))
        let revived = try Pane(["--url", server.url.absoluteString, "--session", killedID], environment: environment)
        defer { revived.close() }
        try await revived.waitFor("Welcome back", "Stack: Photos › \(screen)")

        let unknown = try await runProcess(
            BuiltProducts.binDirectory + "/photos-app", ["--url", server.url.absoluteString, "--session", "nope"], in: NSTemporaryDirectory(),
            environment: environment)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no secret kept for session nope"), "\(unknown.stderr)")
        let mixed = try await runProcess(BuiltProducts.binDirectory + "/photos-app", ["--session", id, "--tabs"], in: NSTemporaryDirectory())
        #expect(mixed.status == 64)
    }

    @Test("Ctrl-C gives the terminal back as it was (echo, line editing) and says how to resume")
    func controlC() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let pane = try Pane(["--url", server.url.absoluteString], then: "stty -a | tr ' ' '\\n' | grep -x -e echo -e -echo -e icanon -e -icanon | paste -sd ' '; sleep 30")
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "1-9 open a photo")
        try pane.keys("C-c")
        try await pane.waitFor("The session stays on the server: photos-app --session", "icanon echo")
        let shown = try pane.text()
        #expect(!shown.contains("-echo"), "echo left off:\n\(shown)")
    }

    @Test("a resize draws again at the new size: the header stays, long lines are cut")
    func resize() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let pane = try Pane(["--url", server.url.absoluteString])
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "1-9 open a photo")
        try pane.tmux(["resize-window", "-t", pane.name, "-x", "40", "-y", "12"])
        // Drawn again once the app sees SIGWINCH: the header first, cut to 40 columns.
        var shown = try pane.text()
        let deadline = ContinuousClock.now + .seconds(30)
        while !(shown.hasPrefix("photos-app · ") && shown.split(separator: "\n").first?.hasSuffix("…") == true), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            shown = try pane.text()
        }
        let lines = shown.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first?.hasPrefix("photos-app · ") == true, "the header scrolled away:\n\(shown)")
        #expect(lines.allSatisfy { $0.count <= 40 }, "a line is wider than the window:\n\(shown)")
        #expect(lines.contains { $0.hasSuffix("…") }, "nothing was cut to fit")
        #expect(shown.contains("Keys: "), "the keys line is gone:\n\(shown)")
    }

    @Test("r reloads the catalogue: a photo added meanwhile is listed with its price")
    func reloadCatalogue() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let pane = try Pane(["--url", server.url.absoluteString])
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "1-9 open a photo")
        try pane.keys("r")
        try await pane.waitFor("Up to date: nothing changed.")
        let added = try await runProcess(
            BuiltProducts.binDirectory + "/photos-admin", ["photos", "add", "--title", "Fog over the bay", "--price", "4.25", "--db", "data/photos.db"],
            in: server.directory.path)
        #expect(added.status == 0, "\(added.output)")
        try pane.keys("r")
        try await pane.waitFor("1 new photo in the catalogue.", "6  Fog over the bay  $4.25")
        try pane.keys("6")
        try await pane.waitFor("── Fog over the bay ──", "Price: $4.25")
    }

    @Test("a change made on another device shows at once: the app follows the session's change feed")
    func followsOtherDevices() async throws {
        let server = try await LiveServer()
        defer { server.stop() }
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let pane = try Pane(["--url", server.url.absoluteString], environment: ["XDG_STATE_HOME": state.path])
        defer { pane.close() }
        try await pane.waitFor("Golden Gate at dusk", "1-9 open a photo")
        let kept = try FileManager.default.contentsOfDirectory(atPath: state.file("photos-app/sessions"))
        let file = try #require(kept.first)
        let stored = try #require(try FileSessionStore(path: state.file("photos-app/sessions/\(file)")).load())
        let tablet = server.driver()
        try await tablet.attach(sessionID: stored.id, secret: stored.secret)
        _ = try await tablet.send(.selectPhoto(2))
        try await pane.waitFor("Changed on another device. Now: Harbour in the rain.", "Stack: Photos › Harbour in the rain")
        // The app's own next action goes on from there.
        try pane.keys("h")
        try await pane.waitFor("Now: Photos.")
    }
}
