import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosdProcess
import PhotosTestSupport
import Testing

/// The second hardening round (what a hostile viewer, client and operator found), against a real
/// photosd: each test fails on the code before its fix.
@Suite("Console and listener hardening", .serialized)
struct ConsoleHardeningTests {
    typealias Fixture = ConsoleTests.Fixture

    /// The console's port, from its base URL.
    static func port(_ url: String) throws -> Int {
        try #require(url.split(separator: ":").last.flatMap { Int($0) })
    }

    @Test("a viewer's dates that the timestamp form cannot say are 400, and photosd lives on")
    func unrepresentableDates() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        try await f.console.signIn("vera", password: ConsoleTests.viewerPassword)
        for path in [
            "/console/sessions?since=0000-01-01", "/console/sessions?since=1969-12-31T23:59:59.500Z", "/console/sessions?since=10000-01-01",
            "/console/funnel?until=0000-01-01", "/console/funnel.svg?until=0000-01-01", "/console/funnel?until=1969-12-31",
        ] {
            let answer = try await f.console.get(path)
            #expect(answer.status == 400, "\(path): \(answer.status)")
        }
        // The earliest day the form says is a day like any other.
        #expect(try await f.console.get("/console/funnel?until=1970-01-01&days=366").status == 200)
        #expect(try await f.console.get("/console/sessions?since=1970-01-01").status == 200)
        try await Task.sleep(for: .seconds(1))
        #expect(try await f.daemon.request("GET", "/healthz").0 == 200, "photosd died: \(f.daemon.log.suffix(2_000))")
        #expect(!f.daemon.log.contains("Fatal error"))
        let report = try await runProcess(
            Daemon.binDirectory + "/photos-admin", ["report", "funnel", "--until", "0000-01-01", "--db", f.harness.configuration.databasePath],
            in: f.harness.directory.path)
        #expect(report.status != 0 && report.output.contains("--until"), "\(report.output)")
    }

    /// Int64.max, its neighbours and the values past both ends: what a hostile viewer or client
    /// puts in every number a request carries.
    static let hostileNumbers = [
        "9223372036854775807", "9223372036854775806", "9223372036854770808", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "-1", "0",
    ]

    @Test("every number a request carries, on both listeners, takes Int64.max and its neighbours: a 4xx or an answer, and photosd lives on")
    func hostileNumbersEverywhere() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        try await f.console.signIn("vera", password: ConsoleTests.viewerPassword)
        let id = try await f.sessionWaitingToBuy()
        let consolePort = try Self.port(f.console.baseURL)
        let cookie = f.console.cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ")
        var served: [String] = []
        for value in Self.hostileNumbers {
            // The console's pages.
            for path in ["/console/sessions/\(id)?at=\(value)", "/console/sessions/\(id)?from=\(value)", "/console/funnel?days=\(value)"] {
                let status = try await f.console.get(path).status
                #expect((200..<500).contains(status), "\(path): \(status)")
            }
            // The console's streams: each polled once (where the overflow was), then let go.
            for (path, header) in [
                ("/console/sessions/live?after=\(value)", ""), ("/console/sessions/live", "Last-Event-ID: \(value)\r\n"),
                ("/console/sessions/\(id)/live?after=\(value)", ""),
            ] {
                let socket = try RawSocket(port: consolePort, timeoutSeconds: 5)
                _ = socket.sendAll(Array("GET \(path) HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\(header)Accept: text/event-stream\r\n\r\n".utf8))
                let answer = socket.read(for: .milliseconds(1_300))
                socket.shutdownBoth()
                let status = answer.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                #expect((200..<500).contains(status), "\(path) \(header): \(answer.prefix(200))")
                served.append(path)
            }
            // The API's queries, path, body and header.
            for path in [
                "/v1/photos?after=\(value)", "/v1/photos?limit=\(value)", "/v1/photos/\(value)",
                "/v1/sessions/\(id)/events?after=\(value)", "/v1/sessions/\(id)/events?limit=\(value)",
                "/v1/sessions/\(id)/changes?after=\(value)&wait=0", "/v1/sessions/\(id)/changes?wait=\(value)",
            ] {
                let (status, _) = try await f.daemon.request("GET", path)
                #expect((200..<500).contains(status), "\(path): \(status)")
            }
            for body in [#"{"action":"selectPhoto","photoId":\#(value)}"#, #"{"action":"back","expectVersion":\#(value)}"#] {
                let (status, _) = try await f.daemon.request("POST", "/v1/sessions/\(id)/actions", body: body)
                #expect((200..<500).contains(status), "\(body): \(status)")
            }
            let (status, _) = try await f.daemon.request("GET", "/v1/photos", headers: ["Photos-API-Version": value])
            #expect((200..<500).contains(status), "Photos-API-Version: \(value): \(status)")
        }
        #expect(try await f.daemon.request("GET", "/healthz").0 == 200, "photosd died: \(f.daemon.log.suffix(2_000))")
        #expect(!f.daemon.log.contains("Fatal error") && !f.daemon.log.contains("overflow"), "\(f.daemon.log.suffix(2_000))")
    }

    @Test("the console's listener has the API's guards: request deadline, idle timeout, 100-continue, declared bodies, HTTP/1.0")
    func consoleListenerGuards() async throws {
        let f = try await Fixture.start(.sqlite, environment: [
            "PHOTOSD_SERVER_REQUEST_TIMEOUT_SECONDS": "2", "PHOTOSD_SERVER_IDLE_TIMEOUT_SECONDS": "2",
        ])
        defer { f.close() }
        let port = try Self.port(f.console.baseURL)
        let start = ContinuousClock.now
        // A slowloris head, an idle connection, a 100-continue that never sends its body.
        let slow = try RawSocket(port: port, timeoutSeconds: 10)
        let idle = try RawSocket(port: port, timeoutSeconds: 10)
        let continued = try RawSocket(port: port, timeoutSeconds: 10)
        #expect(continued.sendAll(Array(
            "POST /console/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n".utf8)))
        #expect(slow.sendAll(Array("GET /console/sign-in HTTP/1.1\r\n".utf8)))
        let trickled = slow.trickle(Array("X-Slow: \(String(repeating: "a", count: 100))\r\n\r\n".utf8), every: .milliseconds(200))
        #expect(trickled < 100, "the console waited for the whole slow head")
        #expect(slow.readToEnd().closed)
        #expect(idle.readToEnd().closed, "an idle connection to the console was kept")
        let (answer, closed) = continued.readToEnd()
        #expect(closed, "a 100-continue without its body was kept: \(String(decoding: answer, as: UTF8.self))")
        #expect(ContinuousClock.now - start < .seconds(8))

        // A form declared far over the console's limit: 413 from the head alone.
        let big = try RawSocket(port: port, timeoutSeconds: 5)
        let sent = ContinuousClock.now
        #expect(big.sendAll(Array(
            "POST /console/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10485760\r\n\r\n".utf8)))
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = buffer.withUnsafeMutableBytes { recv(big.fd, $0.baseAddress, $0.count, 0) }
        #expect(String(decoding: buffer[..<max(count, 0)], as: UTF8.self).hasPrefix("HTTP/1.1 413"))
        #expect(ContinuousClock.now - sent < .seconds(2))

        // HTTP/1.0 without keep-alive: an HTTP/1.0 answer, never chunked, and the end.
        let old = try RawSocket(port: port, timeoutSeconds: 5)
        let (page, ended) = old.readAnswer(to: "GET /console/sign-in HTTP/1.0\r\nHost: x\r\n\r\n")
        #expect(page.hasPrefix("HTTP/1.0 200"), "\(page.prefix(200))")
        #expect(!page.lowercased().contains("transfer-encoding: chunked"))
        #expect(page.contains("</html>"))
        #expect(ended)
    }

    @Test("a flood of idle connections to the console takes its own cap, never the API's descriptors")
    func consoleConnectionCap() async throws {
        let f = try await Fixture.start(.sqlite, environment: ["PHOTOSD_CONSOLE_MAX_CONNECTIONS": "16"])
        defer { f.close() }
        let port = try Self.port(f.console.baseURL)
        var flood: [RawSocket] = []
        for _ in 0..<300 { flood.append(try RawSocket(port: port, timeoutSeconds: 3)) }
        // Over the cap, a connection is closed as soon as it is accepted.
        var closedAtOnce = 0
        for socket in flood.suffix(200) where socket.readToEnd().closed { closedAtOnce += 1 }
        #expect(closedAtOnce == 200, "connections over console.maxConnections were kept: \(closedAtOnce) of 200 closed")
        #expect(try await f.daemon.request("GET", "/healthz").0 == 200)
        flood.removeAll()
        // Once they are gone the console serves again.
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await f.console.get("/console/sign-in").status == 200)
    }

    @Test("the sessions live stream starts at the newest row, refuses a bad after=, is bounded per operator; a missing trail is 404")
    func liveStreams() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        for _ in 0..<20 { _ = try await f.daemon.request("POST", "/v1/sessions") }
        try await f.console.signIn("vera", password: ConsoleTests.viewerPassword)
        let port = try Self.port(f.console.baseURL)
        let cookie = f.console.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        func open(_ path: String) throws -> RawSocket {
            let socket = try RawSocket(port: port, timeoutSeconds: 5)
            #expect(socket.sendAll(Array("GET \(path) HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\r\n".utf8)))
            return socket
        }
        let stream = try open("/console/sessions/live")
        try await Task.sleep(for: .milliseconds(1_500))
        let (_, created) = try await f.daemon.request("POST", "/v1/sessions")
        let id = try #require(created["id"] as? String)
        let text = stream.read(for: .seconds(3))
        #expect(text.hasPrefix("HTTP/1.1 200"))
        let events = text.components(separatedBy: "event: session").count - 1
        #expect(events == 1, "history replayed: \(events) events")
        #expect(text.contains(id))

        for bad in ["abc", "-99", "1.5"] {
            #expect(try await f.console.get("/console/sessions/live?after=\(bad)").status == 400, "after=\(bad)")
        }
        #expect(try await f.console.get("/console/sessions/no-such-session/live").status == 404)
        #expect(try await f.console.get("/console/sessions/operator/live").status == 404)
        #expect(try await f.console.get("/console/sessions/api/live").status == 404)

        // Eight open at once; the ninth is refused until one ends.
        var open8: [RawSocket] = []
        for _ in 0..<7 { open8.append(try open("/console/sessions/live")) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(try await f.console.get("/console/sessions/live").status == 429)
        stream.shutdownBoth()
        open8.removeAll()
        try await Task.sleep(for: .seconds(2))
        let again = try open("/console/sessions/live")
        #expect(again.read(for: .milliseconds(500)).hasPrefix("HTTP/1.1 200"))
    }

    @Test("a removed operator's open stream ends at its next poll", arguments: TestStore.all)
    func streamsEndWithTheirSession(store: TestStore) async throws {
        let f = try await Fixture.start(store)
        defer { f.close() }
        try await f.console.signIn("vera", password: ConsoleTests.viewerPassword)
        let port = try Self.port(f.console.baseURL)
        let cookie = f.console.cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        let stream = try RawSocket(port: port, timeoutSeconds: 5)
        #expect(stream.sendAll(Array("GET /console/sessions/live HTTP/1.1\r\nHost: x\r\nCookie: \(cookie)\r\n\r\n".utf8)))
        #expect(stream.read(for: .milliseconds(1_200)).hasPrefix("HTTP/1.1 200"))
        let removed = try await runProcess(
            Daemon.binDirectory + "/photos-admin", ["operators", "remove", "vera", "--db", f.harness.configuration.databasePath],
            in: f.harness.directory.path)
        #expect(removed.status == 0, "\(removed.output)")
        let removedAt = ContinuousClock.now
        for _ in 0..<3 { _ = try await f.daemon.request("POST", "/v1/sessions") }
        // The stream's chunked body ends (its last chunk) at its next poll.
        let rest = stream.read(for: .seconds(3))
        #expect(rest.contains("\r\n0\r\n\r\n"), "the stream went on after its operator was removed: \(rest)")
        #expect(ContinuousClock.now - removedAt < .seconds(5))
        #expect(!rest.contains("event: session"), "events after the removal")
    }

    @Test("the console's sign-in takes no password by its prefix: a NUL or more than 72 bytes is 400, and signs nobody in")
    func consolePasswordRule() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        let long = String(repeating: "p", count: 72)
        let added = try await runProcess(
            Daemon.binDirectory + "/photos-admin", ["operators", "add", "olga", "--role", "viewer", "--password-stdin", "--db", f.harness.configuration.databasePath],
            stdin: long, in: f.harness.directory.path)
        #expect(added.status == 0, "\(added.output)")
        for password in ["\(ConsoleTests.viewerPassword)\u{0}anything else", long + String(repeating: "x", count: 16), long + String(repeating: "y", count: 900)] {
            let client = ConsoleClient(baseURL: f.console.baseURL)
            let name = password.hasPrefix(long) ? "olga" : "vera"
            let answer = try await client.signIn(name, password: password)
            #expect(answer.status == 400, "\(name) with \(password.utf8.count) bytes: \(answer.status)")
            #expect(client.cookies["photosd_console"] == nil)
        }
        #expect(try await ConsoleClient(baseURL: f.console.baseURL).signIn("olga", password: long).status == 303)
    }

    @Test("session ids stay out of the log however the path is spelled, and such paths route as the plain ones")
    func sessionIDsNotLogged() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon([], in: directory.path)
        defer { _ = daemon.stop() }
        let (_, created) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(created["id"] as? String)
        let secret = try #require(created["sessionSecret"] as? String)
        for path in [
            "//v1/sessions/\(id)", "/v1//sessions/\(id)", "/v1/sessions//\(id)", "/v1/sessions/\(id)//events", "//v1/sessions/\(id)/events",
            // Dot segments, resolved as RFC 3986 says before anything sees the path.
            "/./v1/sessions/\(id)", "/v1/./sessions/\(id)", "/v1/x/../sessions/\(id)", "/v1/sessions/\(id)/./events", "/../v1/sessions/\(id)",
        ] {
            let socket = try RawSocket(port: daemon.port)
            let answer = socket.exchange("GET \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Session \(secret)\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(path): \(answer.prefix(100))")
        }
        let socket = try RawSocket(port: daemon.port)
        let body = #"{"action": "selectPhoto", "photoId": 1}"#
        _ = socket.exchange("POST //v1/sessions/\(id)/actions HTTP/1.1\r\nHost: x\r\nAuthorization: Session \(secret)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        for path in ["/v1/%73essions/\(id)", "/V1/SESSIONS/\(id)"] {
            _ = try RawSocket(port: daemon.port).exchange("GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(daemon.log.contains("http.path"), "no request lines logged")
        #expect(!daemon.log.contains(id), "a session id in the log")
        #expect(!daemon.log.contains(secret), "a session secret in the log")
        #expect(!daemon.log.contains("//v1") && !daemon.log.contains("/./") && !daemon.log.contains("/../"))
    }

    @Test("the guard's own answers on the API's listener (a 413 from the declared length) name the API's version, as every answer does")
    func guardAnswersNameTheVersion() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(["--no-console"], in: directory.path)
        defer { _ = daemon.stop() }
        let answer = try RawSocket(port: daemon.port).exchange(
            "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\nConnection: close\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(200))")
        #expect(answer.lowercased().contains("photos-api-version: 1"), "\(answer.prefix(400))")
    }

    @Test("operators added and removed, console sign-ins, failures, limits and sign-outs are in the operator trail with the address, never the password", arguments: TestStore.all)
    func operatorsAudited(store: TestStore) async throws {
        let f = try await Fixture.start(store, environment: ["PHOTOSD_AUTH_SIGN_IN_MAX_ATTEMPTS": "2"])
        defer { f.close() }
        _ = try await f.console.signIn("otto", password: "wrong password 1")
        _ = try await ConsoleClient(baseURL: f.console.baseURL).signIn("nobody-here", password: "wrong password 2")
        _ = try await f.console.signIn("otto", password: "wrong password 3")
        let limited = try await f.console.signIn("otto", password: "wrong password 4")
        #expect(limited.status == 429)
        let vera = ConsoleClient(baseURL: f.console.baseURL)
        #expect(try await vera.signIn("vera", password: ConsoleTests.viewerPassword).status == 303)
        let page = try await vera.get("/console/sessions")
        #expect(try await vera.post("/console/sign-out", form: ["csrf": page.csrf ?? ""]).status == 303)
        let removed = try await runProcess(
            Daemon.binDirectory + "/photos-admin", ["operators", "remove", "otto", "--db", f.harness.configuration.databasePath],
            in: f.harness.directory.path, environment: ["USER": "ops-lead"])
        #expect(removed.status == 0, "\(removed.output)")
        let rows = try await f.harness.query("SELECT actor, step, detail FROM audit_trail WHERE session_id = 'operator' ORDER BY seq").map {
            "\(try $0.string(0)) \(try $0.string(1)) \(try $0.string(2))"
        }
        let text = rows.joined(separator: "\n")
        #expect(rows.filter { $0.contains("operator.created") }.count == 2, "\(text)")
        #expect(text.contains(#"operator:ops-lead operator.removed {"endedSessions":0,"operator":"otto"}"#), "\(text)")
        #expect(text.contains(#"client auth.signInFailed {"address":"127.0.0.1","attemptedOperator":"otto","via":"console"}"#), "\(text)")
        #expect(text.contains(#"client auth.signInFailed {"address":"127.0.0.1","unknownOperator":true,"via":"console"}"#), "\(text)")
        #expect(text.contains(#""limit":"usernameAndAddress""#) && text.contains(#""reason":"tooManyAttempts""#), "\(text)")
        #expect(text.contains(#"operator:vera auth.signIn {"address":"127.0.0.1","via":"console"}"#), "\(text)")
        #expect(text.contains(#"operator:vera auth.signOut {"address":"127.0.0.1","via":"console"}"#), "\(text)")
        #expect(!text.contains("wrong password") && !text.contains("nobody-here") && !text.contains(ConsoleTests.viewerPassword))
        let audit = try await runProcess(
            Daemon.binDirectory + "/photos-admin", ["audit", "verify", "--db", f.harness.configuration.databasePath], in: f.harness.directory.path)
        #expect(audit.status == 0, "\(audit.output)")
        // And in the log: who and from where (a name only when it is an operator's).
        #expect(f.daemon.log.contains("console sign-in failed") && f.daemon.log.contains("console sign-in refused by a limit"))
        #expect(f.daemon.log.contains("console sign-out") && f.daemon.log.contains("operator=vera"))
        #expect(!f.daemon.log.contains("nobody-here") && !f.daemon.log.contains("wrong password"))
    }

    @Test("under a low descriptor limit the caps are lowered to fit it: a flood of idle connections leaves the database and the keys their descriptors")
    func descriptorBudget() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // photosd under `ulimit -n 400` (soft and hard): 256 kept back, the console's cap 36, the API's 108.
        let wrapper = directory.file("photosd-limited")
        try "#!/bin/sh\nulimit -n 400\nexec '\(Daemon.binDirectory)/photosd' \"$@\"\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)
        let daemon = try await offThePool {
            try PhotosdProcess(binary: wrapper, arguments: ["--db", "photos.db"], directory: directory.path, environment: [
                "PHOTOSD_AUTH_BCRYPT_COST": "4", "PHOTOSD_DATABASE_DURABILITY": "normal", "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1",
            ])
        }
        defer { daemon.stop() }
        #expect(daemon.log.contains("connection caps lowered to fit the descriptor limit"), "\(daemon.log)")
        #expect(daemon.log.contains("4096 -> 108"), "\(daemon.log)")
        var flood: [RawSocket] = []
        for _ in 0..<500 { flood.append(try RawSocket(port: daemon.port, timeoutSeconds: 3)) }
        // Something to checkpoint while the flood holds its connections: the checkpoint reads the key.
        let added = try await runProcess(
            Daemon.binDirectory + "/photos-admin", ["users", "add", "carol", "--password-stdin", "--db", "photos.db"],
            stdin: "correct horse battery", in: directory.path)
        #expect(added.status == 0, "\(added.output)")
        try await Task.sleep(for: .seconds(3))
        #expect(!daemon.log.contains("Too many open files"), "\(daemon.log.suffix(3_000))")
        #expect(!daemon.log.contains("checkpoint failed"), "\(daemon.log.suffix(3_000))")
        var closedAtOnce = 0
        for socket in flood.suffix(300) where socket.readToEnd().closed { closedAtOnce += 1 }
        #expect(closedAtOnce == 300)
        flood.removeAll()
        try await Task.sleep(for: .milliseconds(300))
        let answer = try RawSocket(port: daemon.port).exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 200"))
    }

    @Test("a busy port stops photosd with one line naming the listener and the setting to change")
    func busyPort() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A port held by another socket: the API's, then the console's.
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(holder, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(holder, $0, &length) } }
        #expect(listen(holder, 1) == 0)
        let busy = Int(UInt16(bigEndian: address.sin_port))
        let environment = ["PHOTOSD_AUTH_BCRYPT_COST": "4"]
        for (arguments, listener, setting) in [
            (["--port", "\(busy)", "--console-port", "0", "--metrics-port", "0"], "the API", "server.port"),
            (["--port", "0", "--console-port", "\(busy)", "--metrics-port", "0"], "the console", "console.port"),
            (["--port", "0", "--console-port", "0", "--metrics-port", "\(busy)"], "the metrics listener", "metrics.port"),
        ] {
            let result = try await runProcess(Daemon.binDirectory + "/photosd", ["--db", "photos.db"] + arguments, in: directory.path, environment: environment)
            #expect(result.status != 0)
            let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.contains("\(listener) cannot listen on 127.0.0.1:\(busy): Address already in use"), "\(last)")
            #expect(last.contains(setting) && !last.contains("bind(descriptor"), "\(last)")
        }
    }

    @Test("photos-admin's actor is a valid operator name: a login name with a newline or a space is not written to the trail")
    func cliActorIsValidated() async throws {
        let f = try await Fixture.start(.sqlite)
        defer { f.close() }
        for user in ["evil\nname", "two words"] {
            let added = try await runProcess(
                Daemon.binDirectory + "/photos-admin", ["photos", "add", "--title", "T", "--price", "1.00", "--db", f.harness.configuration.databasePath],
                in: f.harness.directory.path, environment: ["USER": user, "LOGNAME": user])
            #expect(added.status == 0, "\(added.output)")
        }
        let actors = try await f.harness.query("SELECT DISTINCT actor FROM audit_trail WHERE step = 'photo.added' AND actor LIKE 'operator:%'").map { try $0.string(0) }
        #expect(!actors.isEmpty)
        for actor in actors {
            #expect((try? Credentials.validate(username: String(actor.dropFirst("operator:".count)))) != nil, "\(actor)")
        }
    }
}

extension RawSocket {
    /// Sends `request` and reads until the peer closes: the answer, and whether it closed.
    func readAnswer(to request: String) -> (String, Bool) {
        _ = sendAll(Array(request.utf8))
        let (data, closed) = readToEnd()
        return (String(decoding: data, as: UTF8.self), closed)
    }

    /// What arrives within `duration` (a stream that does not end), as text.
    func read(for duration: Duration) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            let left = end - ContinuousClock.now
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard poll(&poller, 1, max(milliseconds, 1)) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[..<count])
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Ends the connection both ways now.
    func shutdownBoth() {
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
