import Foundation
import PhotosListener
import PhotosTestSupport
import PhotosdProcess
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `server.trustedProxies`: behind a real nginx (Debian's, started here with `deploy/nginx.conf`),
/// each client behind it has its own limits; from any other peer, forwarding headers are ignored.
@Suite("Trusted proxies")
struct TrustedProxyTests {
    /// Debian's nginx, when installed (`scripts/install-dependencies` installs it).
    static let nginx: String? = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    /// `scripts/test` sets it: there the nginx test runs, never skipped.
    static let nginxRequired = ProcessInfo.processInfo.environment["PHOTOSD_REQUIRE_NGINX"] == "1"
    static let nginxTestRuns = nginx != nil || nginxRequired

    @Test("behind nginx the limits count each client, and a client's own X-Forwarded-For changes nothing; a direct peer's headers are ignored",
          .enabled(if: TrustedProxyTests.nginxTestRuns))
    func limitsPerClientBehindNginx() async throws {
        let nginx = try #require(Self.nginx, "nginx is not installed (scripts/install-dependencies installs it)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await migrateDefaultDatabase(in: directory.path)
        let daemon = try await Daemon(["--no-console"], in: directory.path, environment: [
            "PHOTOSD_SERVER_TRUSTED_PROXIES": "127.0.0.1, ::1",
            "PHOTOSD_LIMITS_SESSIONS_PER_MINUTE_PER_ADDRESS": "3",
        ])
        defer { _ = daemon.stop() }
        let proxy = try NginxProcess(binary: nginx, upstreamPort: daemon.port, in: directory.path)
        defer { proxy.stop() }

        // Three new sessions a minute per client address: client A (127.0.0.2) gets three, then 429.
        for _ in 0..<3 { #expect(try await Self.createSession(via: proxy.port, from: "127.0.0.2") == 201) }
        #expect(try await Self.createSession(via: proxy.port, from: "127.0.0.2") == 429)
        // Its own X-Forwarded-For only adds hops to the left of the one nginx appends.
        #expect(try await Self.createSession(via: proxy.port, from: "127.0.0.2", forwardedFor: "198.51.100.7") == 429)
        // Its own Forwarded, which nginx sets nothing in: cleared by nginx, and never read by photosd.
        for index in 0..<3 {
            #expect(try await Self.createSession(via: proxy.port, from: "127.0.0.2", headers: "Forwarded: for=198.51.100.\(index)\r\n") == 429)
        }
        #expect(try await Self.createSession(
            via: daemon.port, from: "127.0.0.1", headers: "Forwarded: for=198.51.100.20\r\nX-Forwarded-For: 127.0.0.2\r\n") == 429,
            "photosd took a trusted peer's Forwarded over the X-Forwarded-For it is configured to read")
        // Client B, behind the same nginx (whose own address is 127.0.0.1 for photosd), is not A.
        #expect(try await Self.createSession(via: proxy.port, from: "127.0.0.3") == 201)

        // Straight to photosd from a peer that is not trusted: the header is ignored, the peer counts.
        for index in 0..<3 {
            #expect(try await Self.createSession(via: daemon.port, from: "127.0.0.4", forwardedFor: "203.0.113.\(index)") == 201)
        }
        #expect(try await Self.createSession(via: daemon.port, from: "127.0.0.4", forwardedFor: "203.0.113.99") == 429)

        // The request log names the client, not the proxy.
        #expect(await daemon.waitForLog("client.address=127.0.0.3"), "\(daemon.log.suffix(2_000))")
        #expect(!daemon.log.contains("198.51.100.") && !daemon.log.contains("203.0.113."))
    }

    @Test("deploy/nginx.conf with two instances: one whose database does not answer (503) is taken out of rotation, every GET through nginx is answered by the other",
          .enabled(if: TrustedProxyTests.nginxTestRuns))
    func unreadyInstanceOutOfRotation() async throws {
        let nginx = try #require(Self.nginx, "nginx is not installed (scripts/install-dependencies installs it)")
        let cluster = try TemporaryDirectory()
        let script = Daemon.packageRoot + "/scripts/postgres-test-server"
        let started = try await runProcess(script, ["start", cluster.path], in: cluster.path)
        try #require(started.status == 0, "\(started.output)")
        defer { _ = try? runProcessBlocking(script, ["resume", cluster.path], in: "/"); _ = try? runProcessBlocking(script, ["stop", cluster.path], in: "/") }
        let url = started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let (one, two) = (try TemporaryDirectory(), try TemporaryDirectory())
        defer { one.remove(); two.remove() }
        let healthy = try await Daemon(["--no-console", "--seed-demo"], in: one.path)
        defer { _ = healthy.stop() }
        let failing = try await Daemon(["--no-console", "--seed-demo"], in: two.path, environment: [
            "PHOTOSD_DATABASE_PATH": url, "PHOTOSD_DATABASE_STATEMENT_TIMEOUT_SECONDS": "1", "PHOTOSD_DATABASE_CONNECT_TIMEOUT_SECONDS": "1",
        ])
        defer { _ = failing.stop() }
        let proxy = try NginxProcess(binary: nginx, upstreamPort: healthy.port, secondPort: failing.port, in: one.path)
        defer { proxy.stop() }
        func photos() async throws -> (Int, Duration) {
            let start = ContinuousClock.now
            let (_, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(proxy.port)/v1/photos")!)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, ContinuousClock.now - start)
        }
        for _ in 0..<4 { #expect(try await photos().0 == 200, "both instances serve") }
        // The second instance's database stops answering: it answers 503 after its statement timeout.
        await #expect(try runProcess(script, ["pause", cluster.path], in: "/").status == 0)
        #expect(await Self.status(failing.port, "/v1/photos") == 503, "the instance itself answers 503")
        // Its request line may reach the log a moment later (lines are written in batches):
        // counted before nginx's requests are, not among them.
        #expect(await failing.waitForLog("http.status=503"))
        let refusedBefore = Self.refusals(failing.log)
        #expect(refusedBefore == 1, "the instance's own 503 was logged once: \(refusedBefore)")
        let through = ContinuousClock.now
        var answers: [(Int, Duration)] = []
        for _ in 0..<8 { answers.append(try await photos()) }
        let elapsed = ContinuousClock.now - through
        #expect(answers.allSatisfy { $0.0 == 200 }, "a client got the failing instance's answer: \(answers)")
        // Once it failed, it is out of rotation for fail_timeout (5 s): nginx tried it at most
        // once per 5 s of the run, not on every other request (the time a request takes depends
        // on the machine's load, so the failing instance's own log is what counts).
        // A marker asked of the instance directly: once its line is in the log, so is every
        // line before it (nginx's requests included).
        #expect(await Self.status(failing.port, "/v1/photos/1") == 503)
        #expect(await failing.waitForLog("http.path=/v1/photos/1 "))
        let tried = Self.refusals(failing.log) - refusedBefore
        let windows = 1 + Int(elapsed.components.seconds / 5)
        #expect(tried >= 1 && tried <= windows, "nginx sent \(tried) of 8 requests to the failing instance in \(elapsed) (at most \(windows)): \(answers)")
    }

    /// How many requests for /v1/photos a photosd's log says it answered 503.
    static func refusals(_ log: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("http.path=/v1/photos ") && $0.contains("http.status=503") }.count
    }

    @Test("a setting that is not an address or a range stops photosd with one line naming it")
    func badSetting() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await migrateDefaultDatabase(in: directory.path)
        let (status, output) = try await runTool(
            Daemon.binDirectory + "/photosd", ["--port", "0", "--no-console"], in: directory.path,
            environment: ["PHOTOSD_SERVER_TRUSTED_PROXIES": "10.0.0.0/8, nginx.internal"])
        #expect(status != 0)
        #expect(output.contains("server.trustedProxies") && output.contains("nginx.internal"), "\(output)")
    }

    @Test("the client is the right-most hop that is not a trusted proxy, of the one header configured; IPv6 and ports")
    func hops() throws {
        let ranges = ["10.0.0.0/8", "192.0.2.1", "2001:db8::/32"]
        // By default only X-Forwarded-For: a Forwarded the proxy passed through is the client's own.
        let byDefault = try TrustedProxies(parsing: ranges)
        #expect(byDefault.clientAddress(peer: "10.1.2.3", forwarded: ["for=198.51.100.9"], xForwardedFor: ["203.0.113.9"]) == "203.0.113.9")
        #expect(byDefault.clientAddress(peer: "10.1.2.3", forwarded: ["for=198.51.100.9"], xForwardedFor: []) == "10.1.2.3")
        // Set to Forwarded: only Forwarded.
        let proxies = try TrustedProxies(parsing: ranges, header: .forwarded)
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwarded: [], xForwardedFor: ["203.0.113.9"]) == "10.1.2.3")
        #expect(TrustedProxies.Header(configured: "x-forwarded-FOR") == .xForwardedFor && TrustedProxies.Header(configured: "X-Real-IP") == nil)
        // Not from a proxy: the peer, whatever the headers say.
        #expect(proxies.clientAddress(peer: "198.51.100.1", forwarded: ["for=203.0.113.9"], xForwardedFor: ["203.0.113.9"]) == "198.51.100.1")
        // From a proxy: right to left, past every trusted hop.
        #expect(byDefault.clientAddress(peer: "10.1.2.3", forwarded: [], xForwardedFor: ["1.1.1.1, 203.0.113.9, 10.9.9.9"]) == "203.0.113.9")
        #expect(byDefault.clientAddress(peer: "10.1.2.3", forwarded: [], xForwardedFor: ["203.0.113.9", "192.0.2.1"]) == "203.0.113.9")
        // Forwarded with quotes, brackets and ports.
        #expect(proxies.clientAddress(
            peer: "10.1.2.3", forwarded: [#"for="[2001:db9::7]:4711";proto=https, for=10.0.0.5"#], xForwardedFor: ["1.1.1.1"]) == "2001:db9::7")
        #expect(proxies.clientAddress(peer: "::ffff:10.1.2.3", forwarded: ["for=203.0.113.9:80"], xForwardedFor: []) == "203.0.113.9")
        // Every hop a proxy: the left-most; a hop that is no address: the proxy that reported it.
        #expect(byDefault.clientAddress(peer: "10.1.2.3", forwarded: [], xForwardedFor: ["10.0.0.1, 10.0.0.2"]) == "10.0.0.1")
        #expect(proxies.clientAddress(peer: "10.1.2.3", forwarded: ["for=unknown, for=10.0.0.2"], xForwardedFor: []) == "10.0.0.2")
        #expect(byDefault.clientAddress(peer: "10.1.2.3", forwarded: [], xForwardedFor: []) == "10.1.2.3")
        // Nothing trusted: always the peer.
        #expect(TrustedProxies.none.clientAddress(peer: "10.1.2.3", forwarded: [], xForwardedFor: ["203.0.113.9"]) == "10.1.2.3")
        #expect(throws: TrustedProxies.InvalidEntry.self) { try TrustedProxies(parsing: ["10.0.0.0/33"]) }
        #expect(throws: TrustedProxies.InvalidEntry.self) { try TrustedProxies(parsing: ["proxy.internal"]) }
    }

    /// `POST /v1/sessions` to `port` from the local address `source`; the answer's status.
    static func createSession(via port: Int, from source: String, forwardedFor: String? = nil, headers: String = "") async throws -> Int {
        try await offThePool {
            let socket = try RawSocket(port: port, from: source)
            let header = (forwardedFor.map { "X-Forwarded-For: \($0)\r\n" } ?? "") + headers
            let answer = socket.exchange(
                "POST /v1/sessions HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\(header)Connection: close\r\n\r\n{}")
            guard let line = answer.split(separator: "\r\n").first, let status = Int(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
            return status
        }
    }
}

/// A free TCP port on 127.0.0.1, and whether something answers on one.
enum FreePort {
    static func find() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func answers(_ port: Int) -> Bool {
        (try? RawSocket(port: port, timeoutSeconds: 1)) != nil
    }
}

/// deploy/nginx.conf as an operator finishes it: its commented TLS lines turned on (with a
/// certificate made here) pass `nginx -t` on the nginx installed, Debian 12's 1.22.
@Suite("deploy/nginx.conf with TLS")
struct NginxTLSConfigTests {
    @Test("the TLS lines uncommented, with a certificate: nginx -t accepts the file", .enabled(if: TrustedProxyTests.nginxTestRuns))
    func tlsLinesPassNginxCheck() async throws {
        let nginx = try #require(TrustedProxyTests.nginx, "nginx is not installed (scripts/install-dependencies installs it)")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let made = try await runProcess(
            "/usr/bin/openssl",
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=shop.example", "-keyout", "key.pem", "-out", "cert.pem"],
            in: directory.path)
        try #require(made.status == 0, "\(made.output)")
        var config = try String(contentsOfFile: BuiltProducts.packageRoot + "/deploy/nginx.conf", encoding: .utf8)
        // Every commented line after "# TLS terminated here", up to the first that is not one.
        var lines = config.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.contains("# TLS terminated here") }, "deploy/nginx.conf lost its TLS lines")
        var uncommented = 0
        for index in (start + 1)..<lines.count {
            guard let range = lines[index].range(of: "# "), lines[index][..<range.lowerBound].allSatisfy(\.isWhitespace) else { break }
            lines[index].removeSubrange(range)
            uncommented += 1
        }
        #expect(uncommented >= 4, "deploy/nginx.conf's TLS lines: \(uncommented)")
        config = lines.joined(separator: "\n")
        for (from, to) in [
            ("/etc/ssl/certs/shop.example.pem", directory.file("cert.pem")), ("/etc/ssl/private/shop.example.key", directory.file("key.pem")),
            ("/run/nginx-photosd.pid", directory.file("nginx.pid")), ("/var/log/nginx/", directory.path + "/"), ("/var/lib/nginx/", directory.path + "/"),
        ] {
            config = config.replacingOccurrences(of: from, with: to)
        }
        try config.write(toFile: directory.file("nginx.conf"), atomically: true, encoding: .utf8)
        let checked = try await runProcess(nginx, ["-t", "-c", directory.file("nginx.conf"), "-p", directory.path], in: directory.path)
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.contains("syntax is ok"), "\(checked.output)")
    }
}

/// nginx in the foreground with `deploy/nginx.conf`, its ports and paths moved into `directory`.
extension TrustedProxyTests {
    /// A GET straight to a photosd's port: its status.
    static func status(_ port: Int, _ path: String) async -> Int {
        guard let (_, response) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!) else { return 0 }
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
}

final class NginxProcess: Sendable {
    let port: Int
    private let process: ChildProcess

    /// nginx with deploy/nginx.conf in `directory`, in front of `upstreamPort` and, when given,
    /// a second instance at `secondPort` (the file's commented second `server` line, uncommented).
    init(binary: String, upstreamPort: Int, secondPort: Int? = nil, in directory: String) throws {
        var config = try String(contentsOfFile: BuiltProducts.packageRoot + "/deploy/nginx.conf", encoding: .utf8)
        port = try FreePort.find()
        let second = "# server 127.0.0.1:8090 max_fails=1 fail_timeout=5s;"
        if let secondPort {
            #expect(config.contains(second), "deploy/nginx.conf no longer has \(second)")
            config = config.replacingOccurrences(of: second, with: "server 127.0.0.1:\(secondPort) max_fails=1 fail_timeout=5s;")
        }
        for (from, to) in [
            ("server 127.0.0.1:8080 max_fails=1 fail_timeout=5s;", "server 127.0.0.1:\(upstreamPort) max_fails=1 fail_timeout=5s;"),
            ("listen 80;", "listen 127.0.0.1:\(port);"),
            ("/run/nginx-photosd.pid", directory + "/nginx.pid"),
            ("/var/log/nginx/", directory + "/"),
            ("/var/lib/nginx/", directory + "/"),
        ] {
            #expect(config.contains(from), "deploy/nginx.conf no longer has \(from)")
            config = config.replacingOccurrences(of: from, with: to)
        }
        let path = directory + "/nginx.conf"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        process = try spawnProcess(binary, ["-c", path, "-p", directory, "-g", "daemon off;"])
        let deadline = Date().addingTimeInterval(10)
        while !FreePort.answers(port) {
            guard Date() < deadline, process.isRunning else {
                let log = (try? String(contentsOfFile: directory + "/photosd-error.log", encoding: .utf8)) ?? ""
                process.signal(SIGTERM)
                process.waitForExit()
                throw NginxFailed(log: log)
            }
            usleep(20_000)
        }
    }

    func stop() {
        process.signal(SIGTERM)
        process.waitForExit()
    }

    struct NginxFailed: Error, CustomStringConvertible {
        let log: String
        var description: String { "nginx did not start: \(log)" }
    }
}
