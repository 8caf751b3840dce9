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
