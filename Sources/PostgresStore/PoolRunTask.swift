import Logging
import PostgresNIO
import Synchronization

/// The task that runs a `PostgresClient` (its pool), and how it is stopped.
///
/// Stopping cancels the task: postgres-nio then closes every connection and `run()` returns
/// once its pool's own tasks have ended. Once, under a heavily overloaded test machine, a
/// process was seen idle with every connection closed and something still waiting for it
/// (`docs/storage.md`, "Stopping the pool"): so the wait is bounded, and a pool that has not
/// stopped by then is logged and left behind rather than hang a shutdown or a tool for ever.
struct PoolRunTask: Sendable {
    let task: Task<Void, Never>

    /// How long `stop` waits for `run()` to return.
    static let stopTimeout: Duration = .seconds(10)

    /// Starts `client.run()` and returns once the task has begun (leasing before that works,
    /// but postgres-nio logs a warning for it). Detached: `run()` ends at a graceful shutdown
    /// it can see through the task-local values a task inherits, and a pool started while a
    /// request of a `ServiceGroup`'s server is handled (a replacement, `PoolRenewal`) would then
    /// stop with the server, before the services that still need it; this one stops at `stop`.
    static func start(_ client: PostgresClient) async -> PoolRunTask {
        let (started, signal) = AsyncStream<Never>.makeStream()
        let task = Task.detached {
            signal.finish()
            await client.run()
        }
        for await _ in started {}
        return PoolRunTask(task: task)
    }

    /// Cancels the pool's task and waits for it, at most `timeout`. Returns whether it ended.
    @discardableResult
    func stop(timeout: Duration = stopTimeout, logger: Logger) async -> Bool {
        task.cancel()
        let ended = await Self.wait(for: task, atMost: timeout)
        if !ended {
            logger.warning("the PostgreSQL connection pool had not stopped \(timeout) after its connections were closed; going on without it")
        }
        return ended
    }

    /// Waits until `task` ends or `timeout` passes, whichever is first; true if it ended.
    /// (A task group would wait for both children, and `task.value` cannot be cancelled.)
    static func wait(for task: Task<Void, Never>, atMost timeout: Duration) async -> Bool {
        let outcome = FirstOutcome()
        return await withCheckedContinuation { continuation in
            outcome.set(continuation)
            let timer = Task {
                try? await Task.sleep(for: timeout)
                outcome.resume(with: false)
            }
            Task {
                await task.value
                timer.cancel()
                outcome.resume(with: true)
            }
        }
    }
}

/// A continuation resumed by the first of two racing tasks (the other's answer is dropped).
private final class FirstOutcome: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<Bool, Never>?, pending: Bool?)>((nil, nil))

    func set(_ continuation: CheckedContinuation<Bool, Never>) {
        let early = state.withLock { state -> Bool? in
            if let pending = state.pending { return pending }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func resume(with value: Bool) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.pending == nil else { return nil }
            state.pending = value
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: value)
    }
}
