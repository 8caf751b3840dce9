import Foundation
@testable import PostgresStore
import Synchronization
import Testing

/// The deadline of every PostgreSQL operation, and the one timer that watches them all.
@Suite("LeaseDeadline and DeadlineWatch")
struct LeaseDeadlineTests {
    struct TimedOut: Error {}

    @Test("a watch calls what is due, never what was removed, and again when an entry asks")
    func watchSweeps() {
        let watch = DeadlineWatch()
        defer { watch.stop() }
        let start = ContinuousClock.now
        let calls = Mutex<[String]>([])
        _ = watch.add(due: start + .seconds(1)) { calls.withLock { $0.append("early") }; return nil }
        let removed = watch.add(due: start + .seconds(1)) { calls.withLock { $0.append("removed") }; return nil }
        _ = watch.add(due: start + .seconds(5)) { calls.withLock { $0.append("late") }; return nil }
        let rearmed = Mutex(false)
        _ = watch.add(due: start + .seconds(2)) {
            calls.withLock { $0.append("twice") }
            return rearmed.withLock { done in defer { done = true }; return done ? nil : start + .seconds(4) }
        }
        watch.remove(removed)
        watch.sweep(now: start + .milliseconds(500))
        #expect(calls.withLock { $0 }.isEmpty)
        watch.sweep(now: start + .seconds(3))
        #expect(calls.withLock { $0 }.sorted() == ["early", "twice"])
        #expect(watch.count == 2)
        watch.sweep(now: start + .seconds(6))
        #expect(calls.withLock { $0 }.sorted() == ["early", "late", "twice", "twice"])
        #expect(watch.count == 0)
    }

    @Test("an operation that ends in time returns its result and leaves nothing watched")
    func inTime() async throws {
        let watch = manualWatch()
        defer { watch.stop() }
        let value = try await LeaseDeadline.run(timeout: .seconds(5), watch: watch, timedOut: { TimedOut() }) { deadline in
            #expect(deadline.claim())
            return 42
        }
        #expect(value == 42)
        #expect(watch.count == 0)
    }

    /// A watch whose own timer never comes in the test's time: the test sweeps it by hand.
    func manualWatch() -> DeadlineWatch { DeadlineWatch(interval: .seconds(3_600)) }

    /// Waits until `flag` is set (the operation's task got that far).
    func waitFor(_ flag: borrowing Mutex<Bool>) async throws {
        while !flag.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
    }

    @Test("the watch's own timer calls what is due")
    func timerRuns() async throws {
        let watch = DeadlineWatch(interval: .milliseconds(10))
        defer { watch.stop() }
        let called = Mutex(false)
        _ = watch.add(due: .now) { called.withLock { $0 = true }; return nil }
        let started = ContinuousClock.now
        while !called.withLock({ $0 }) && ContinuousClock.now < started + .seconds(10) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(called.withLock { $0 })
    }

    @Test("no connection within the wait: the caller gets the timeout and the operation may send nothing")
    func noConnection() async throws {
        let watch = manualWatch()
        defer { watch.stop() }
        let waiting = Mutex(false)
        let claimedLate = Mutex<Bool?>(nil)
        let operation = Task {
            try await LeaseDeadline.run(timeout: .seconds(10), connectionWait: .milliseconds(200), watch: watch, timedOut: { TimedOut() }) { deadline in
                waiting.withLock { $0 = true }
                // Waiting for a connection that never comes (cancelled when the deadline passes).
                try? await Task.sleep(for: .seconds(60))
                claimedLate.withLock { $0 = deadline.claim() }
                return 0
            }
        }
        try await waitFor(waiting)
        watch.sweep(now: .now)  // not due yet
        watch.sweep(now: .now + .milliseconds(300))
        await #expect(throws: TimedOut.self) { try await operation.value }
        while claimedLate.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(5)) }
        #expect(claimedLate.withLock { $0 } == false, "an abandoned operation could still claim its connection")
        #expect(watch.count == 0)
    }

    @Test("an answer that never comes: a second after the statement timeout the connection is closed and the caller told")
    func noAnswer() async throws {
        let watch = manualWatch()
        defer { watch.stop() }
        let sent = Mutex(false)
        let closed = Mutex(false)
        let operation = Task {
            try await LeaseDeadline.run(timeout: .milliseconds(200), connectionWait: .milliseconds(100), watch: watch, timedOut: { TimedOut() }) { deadline in
                #expect(deadline.claim())
                deadline.onAbandon { closed.withLock { $0 = true } }
                defer { deadline.release() }
                sent.withLock { $0 = true }
                try? await Task.sleep(for: .seconds(60))
                return 0
            }
        }
        try await waitFor(sent)
        // The wait for a connection is over, but the statement was sent: its answer has the
        // statement timeout and a second more.
        watch.sweep(now: .now + .milliseconds(150))
        #expect(watch.count == 1)
        #expect(!closed.withLock { $0 })
        watch.sweep(now: .now + .milliseconds(500))
        #expect(watch.count == 1, "called before the statement timeout and a second had passed")
        watch.sweep(now: .now + .milliseconds(1_300))
        await #expect(throws: TimedOut.self) { try await operation.value }
        #expect(closed.withLock { $0 })
        #expect(watch.count == 0)
    }

    @Test("a connection released before the deadline is never closed by it")
    func releasedConnection() async throws {
        let watch = manualWatch()
        defer { watch.stop() }
        let released = Mutex(false)
        let closed = Mutex(false)
        let operation = Task {
            try await LeaseDeadline.run(timeout: .milliseconds(100), connectionWait: .milliseconds(50), watch: watch, timedOut: { TimedOut() }) { deadline in
                #expect(deadline.claim())
                deadline.onAbandon { closed.withLock { $0 = true } }
                deadline.release()
                released.withLock { $0 = true }
                // Back in the pool, still busy with something else when the deadline comes.
                try? await Task.sleep(for: .seconds(60))
                return 0
            }
        }
        try await waitFor(released)
        watch.sweep(now: .now + .seconds(1))
        watch.sweep(now: .now + .seconds(5))
        await #expect(throws: TimedOut.self) { try await operation.value }
        #expect(!closed.withLock { $0 })
    }
}
