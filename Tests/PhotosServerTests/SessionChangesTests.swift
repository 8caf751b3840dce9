import Foundation
import PhotosTestSupport
@testable import PhotosServer
import Synchronization
import Testing

/// The change feed's waits: woken by a change of this process (not by the re-read, set to a
/// minute here), all of them, and gone without a trace when they end or are cancelled.
@Suite("The change feed's waits")
struct SessionChangesTests {
    /// A session's version, as the waits read it.
    final class Versions: Sendable {
        let value = Mutex(1)
        func read() -> Int { value.withLock { $0 } }
        func bump() { value.withLock { $0 += 1 } }
    }

    @Test("a change wakes every wait on the session at once; the table is empty after")
    func wakesEveryWait() async throws {
        // The waits (120 s) and the re-read (300 s) are far past the bound (60 s), so that a
        // loaded machine starting 51 tasks slowly cannot make a wake by the clock look like one
        // by the change (a full run once took 25 s to get here).
        let changes = SessionChanges(reread: .seconds(300))
        let versions = Versions()
        let clock = ContinuousClock()
        let started = clock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { try await changes.wait(for: "s1", after: 1, wait: .seconds(120), version: { $0 }) { versions.read() } }
            }
            // Another session's waits are not woken.
            group.addTask { try await changes.wait(for: "s2", after: 1, wait: .seconds(1), version: { $0 }) { 1 } }
            while changes.counts.suspended < 51 { try await Task.sleep(for: .milliseconds(10)) }
            versions.bump()
            changes.changed("s1")
            var answers: [Int] = []
            for try await version in group { answers.append(version) }
            #expect(answers.sorted() == [1] + Array(repeating: 2, count: 50))
        }
        #expect(clock.now - started < .seconds(60), "woken by the change, not by the 120 s wait or the 300 s re-read")
        #expect(changes.counts.watched == 0 && changes.counts.suspended == 0)
    }

    @Test("a change between the first read and the wait is not missed; a version already past answers at once")
    func noMissedChange() async throws {
        let changes = SessionChanges(reread: .seconds(60))
        let versions = Versions()
        let answer = try await changes.wait(for: "s", after: 1, wait: .seconds(30), version: { $0 }) { () -> Int in
            // The change lands while the first read runs.
            let now = versions.read()
            versions.bump()
            changes.changed("s")
            return now
        }
        #expect(answer == 2)
        #expect(try await changes.wait(for: "s", after: 1, wait: .seconds(30), version: { $0 }) { 5 } == 5)
        #expect(changes.counts.watched == 0)
    }

    @Test("a cancelled wait ends, its continuation resumed and removed")
    func cancelled() async throws {
        let changes = SessionChanges(reread: .seconds(60))
        let waiting = Task { try await changes.wait(for: "s", after: 1, wait: .seconds(30), version: { $0 }) { 1 } }
        while changes.counts.suspended < 1 { try await Task.sleep(for: .milliseconds(10)) }
        waiting.cancel()
        #expect(try await waiting.value == 1)
        #expect(changes.counts.watched == 0 && changes.counts.suspended == 0)
    }
}

/// The change feed's long polls against a real photosd: bounded per client address, and ended
/// (their place given back) as soon as their client goes away.
@Suite("The change feed's long polls", .serialized)
struct LongPollTests {
    @Test("limits.longPollsPerAddress bounds the polls one address holds (429 past it); a poll whose client went away ends and gives its place back at once")
    func boundedAndEndedWithTheirClient() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(["--no-console", "--seed-demo"], in: directory.path, environment: ["PHOTOSD_LIMITS_LONG_POLLS_PER_ADDRESS": "3"])
        defer { _ = daemon.stop() }
        let (_, created) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(created["id"] as? String)
        let secret = try #require(created["sessionSecret"] as? String)
        let version = try #require(created["version"] as? Int)
        let poll = "GET /v1/sessions/\(id)/changes?after=\(version)&wait=20 HTTP/1.1\r\nHost: x\r\nAuthorization: Session \(secret)\r\n\r\n"
        func open() throws -> RawSocket {
            let socket = try RawSocket(port: daemon.port, timeoutSeconds: 5)
            _ = socket.sendAll(Array(poll.utf8))
            return socket
        }
        var held = try (0..<3).map { _ in try open() }
        try await Task.sleep(for: .milliseconds(500))
        // A fourth from the same address: refused at once, with when to come back, and its
        // connection closed (a refused poll does not keep a connection of the listener's).
        let refused = try open().readToEnd()
        let fourth = String(decoding: refused.data, as: UTF8.self)
        #expect(fourth.hasPrefix("HTTP/1.1 429") && fourth.lowercased().contains("retry-after"), "\(fourth.prefix(300))")
        #expect(fourth.lowercased().contains("connection: close") && refused.closed, "\(fourth.prefix(300))")
        // The three clients go away: their waits end and give their places back, well before
        // their 20 s are up.
        for socket in held { socket.shutdownBoth() }
        held.removeAll()
        try await Task.sleep(for: .seconds(1))
        let again = try open()
        let (status, _) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":1}"#)
        #expect(status == 200)
        let answer = again.read(for: .seconds(3))
        #expect(answer.hasPrefix("HTTP/1.1 200"), "a poll after the others went away: \(answer.prefix(300))")
    }
}
