import Synchronization

/// When a host's pool is to be replaced by a new one, after an outage.
///
/// postgres-nio's pool waits between failed connection attempts, 100 ms × 1.25ⁿ up to 60 s, and
/// the wait cannot be configured: after an outage of a minute or two the pool may go on failing
/// for up to that long once the server answers again (one instance of two was seen taking 25 s
/// to be ready). `PostgresStorage` therefore, while its pool fails, opens a connection of its own
/// (`WritableHostFollower`, at most once a second); when that one succeeds and the pool has not
/// served a transaction since it began failing at least `minimumFailing` ago, the host gets a new
/// pool, which connects at once.
///
/// A pool that is merely busy (every connection lent, requests waiting past their deadline)
/// still serves transactions, and each success clears the failing state: it is never replaced.
/// The success path costs one relaxed atomic load while nothing fails.
final class PoolRenewal: Sendable {
    /// How long the pool must have failed, with no success, before it is replaced.
    let minimumFailing: Duration
    /// The least time between two replacements.
    let minimumInterval: Duration
    /// Whether `state.failingSince` is set (read on every success without the lock).
    private let watching = Atomic<Bool>(false)
    private let state = Mutex<(failingSince: ContinuousClock.Instant?, lastRenewal: ContinuousClock.Instant?)>((nil, nil))

    init(minimumFailing: Duration = .seconds(1), minimumInterval: Duration = .seconds(10)) {
        self.minimumFailing = minimumFailing
        self.minimumInterval = minimumInterval
    }

    /// A transaction or a statement was served.
    func succeeded() {
        guard watching.load(ordering: .relaxed) else { return }
        state.withLock { state in
            state.failingSince = nil
            watching.store(false, ordering: .relaxed)
        }
    }

    /// The pool gave no connection (an error of its own, or none within the deadline).
    func failed(at now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            if state.failingSince == nil { state.failingSince = now }
            watching.store(true, ordering: .relaxed)
        }
    }

    /// A connection of our own to the host succeeded: whether the pool is to be replaced now
    /// (it has failed for `minimumFailing` with no success since, and was not replaced in the
    /// last `minimumInterval`). When true the replacement is counted as done.
    func shouldRenew(at now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            guard let since = state.failingSince, now - since >= minimumFailing,
                  state.lastRenewal.map({ now - $0 >= minimumInterval }) ?? true
            else { return false }
            state = (nil, now)
            watching.store(false, ordering: .relaxed)
            return true
        }
    }
}
