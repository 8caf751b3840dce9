import Synchronization

/// How long a request may wait for the server before it is answered "unavailable", and the
/// promise that makes that answer true: nothing is sent after it.
///
/// An operation waits first for a pooled connection (when the server is down, the pool keeps
/// trying to connect), then sends its statements. The deadline races the waiting: if it passes
/// before the operation claims the connection to send (`claim`), the operation is abandoned
/// (its lease cancelled) and the caller gets the timeout at once; if the operation claimed it
/// first, the statements are sent and their answer is awaited — each is bounded by the server's
/// `statement_timeout` — so a statement never commits after its request was told it failed.
///
/// An answer that does not come even after the server's own `statement_timeout` (plus a second)
/// means the connection is dead without having said so: the operation's connection is closed
/// (`onAbandon`), which fails what it was waiting for, and the caller gets the timeout.
final class LeaseDeadline: Sendable {
    private enum State { case waiting, sending, expired }
    private let state = Mutex(State.waiting)
    private let abandon = Mutex<(@Sendable () -> Void)?>(nil)

    /// What closes the operation's connection, should its answer never come. Cleared by
    /// `release` before the connection goes back to the pool.
    func onAbandon(_ action: @escaping @Sendable () -> Void) {
        abandon.withLock { $0 = action }
    }

    /// The operation is done with its connection: nothing may close it on its behalf any more.
    func release() {
        abandon.withLock { $0 = nil }
    }

    /// Closes the operation's connection if it still holds it (under the lock, so a connection
    /// already released to the pool is never closed).
    fileprivate func abandonConnection() {
        abandon.withLock { action in
            action?()
            action = nil
        }
    }

    /// Claims the connection for sending; false when the deadline passed first (send nothing).
    func claim() -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = .sending
            return true
        }
    }

    /// Marks the deadline passed; false when the operation had claimed its connection already.
    fileprivate func expire() -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = .expired
            return true
        }
    }

    /// Runs `body`, or throws `timedOut()` once `connectionWait` (by default `timeout`) passes
    /// while `body` has not yet claimed its connection (then `body` is cancelled and left to end
    /// by itself), or once `connectionWait + timeout + 1 s` passed with no answer to what it sent
    /// (then its connection is closed): the server ends a statement after `timeout` itself.
    /// `watch` checks the deadline (up to its interval late).
    static func run<T: Sendable>(
        timeout: Duration, connectionWait: Duration? = nil, watch: DeadlineWatch, timedOut: @escaping @Sendable () -> any Error,
        _ body: @escaping @Sendable (LeaseDeadline) async throws -> T
    ) async throws -> T {
        let connectionWait = connectionWait ?? timeout
        let deadline = LeaseDeadline()
        let outcome = Outcome<T>()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.set(continuation)
            let work = Task {
                do {
                    outcome.resume(.success(try await body(deadline)))
                } catch {
                    outcome.resume(.failure(error))
                }
            }
            let sentAnswerDue = Mutex(false)
            let id = watch.add(due: .now + connectionWait) {
                if deadline.expire() {
                    work.cancel()
                    outcome.resume(.failure(timedOut()))
                    return nil
                }
                // Sent: the server ends a statement after `timeout` itself (statement_timeout);
                // an answer that has not come a second after that never will.
                let overdue = sentAnswerDue.withLock { due in
                    defer { due = true }
                    return due
                }
                guard overdue else { return .now + timeout + .seconds(1) }
                // Closes the connection only while the operation still holds it (not released).
                deadline.abandonConnection()
                work.cancel()
                outcome.resume(.failure(timedOut()))
                return nil
            }
            outcome.onResume { watch.remove(id) }
        }
    }
}

/// A continuation resumed once, by the first of the work and the timer.
private final class Outcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var done = false
        var onResume: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onResume(_ action: @escaping @Sendable () -> Void) {
        let done = state.withLock { state -> Bool in
            if state.done { return true }
            state.onResume = action
            return false
        }
        if done { action() }
    }

    func resume(_ result: Result<T, any Error>) {
        let (continuation, action) = state.withLock { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !state.done else { return (nil, nil) }
            state.done = true
            defer { state.continuation = nil; state.onResume = nil }
            if state.continuation == nil { state.early = result }
            return (state.continuation, state.onResume)
        }
        continuation?.resume(with: result)
        action?()
    }
}

extension Duration {
    /// Whole nanoseconds.
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
