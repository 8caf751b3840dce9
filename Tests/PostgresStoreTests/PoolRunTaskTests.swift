import Foundation
@testable import PostgresStore
import Synchronization
import Testing

/// Stopping a pool's task waits for it, but not for ever.
@Suite("PoolRunTask")
struct PoolRunTaskTests {
    @Test("a task that ends is waited for; one that never ends is given up after the timeout")
    func boundedWait() async throws {
        let ending = Task { _ = try? await Task.sleep(for: .milliseconds(50)) }
        #expect(await PoolRunTask.wait(for: ending, atMost: .seconds(30)))

        // Parked on a continuation and deaf to cancellation: what a pool stuck in its shutdown
        // looks like. Let go at the end, so nothing is leaked.
        let parked = Parked()
        let stuck = Task { await withCheckedContinuation { continuation in parked.continuation.withLock { $0 = continuation } } }
        let start = ContinuousClock.now
        #expect(await PoolRunTask.wait(for: stuck, atMost: .milliseconds(200)) == false)
        #expect(ContinuousClock.now - start >= .milliseconds(200))
        while parked.continuation.withLock({ $0 == nil }) { try await Task.sleep(for: .milliseconds(5)) }
        parked.continuation.withLock { $0 }?.resume()
        await stuck.value

        // Already ended before the wait began.
        let done = Task {}
        await done.value
        #expect(await PoolRunTask.wait(for: done, atMost: .seconds(30)))
    }
}

private final class Parked: Sendable {
    let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
}
