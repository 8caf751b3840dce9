import NIOCore
import NIOPosix
import Synchronization

/// Every running operation's deadline, checked by one repeating timer.
///
/// Each PostgreSQL operation has a deadline (`LeaseDeadline`). Two event-loop timers per
/// operation — scheduled from a task of the cooperative pool, then cancelled when the answer came,
/// each a cross-thread hand-over that wakes the loop — cost about 5 % of photosd's CPU per action.
/// Here an operation adds an entry under a lock and removes it when it ends; a timer looks every
/// `interval` for entries whose time has come. A deadline therefore fires up to `interval` late,
/// which is nothing next to timeouts of seconds.
final class DeadlineWatch: Sendable {
    /// What an entry does when its time comes: nil when it is done, or the next time to call it.
    typealias Expiry = @Sendable () -> ContinuousClock.Instant?

    private struct Entry {
        var due: ContinuousClock.Instant
        let expire: Expiry
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var timer: RepeatedTask?
        var stopped = false
    }

    private let state = Mutex(State())
    /// How often the timer looks.
    let interval: Duration

    /// A watch that looks every `interval` (on one of the shared event loops, from the first
    /// entry on, until `stop`).
    init(interval: Duration = .milliseconds(100)) {
        self.interval = interval
    }

    /// Adds an entry called once `due` has passed; returns its id for `remove`.
    func add(due: ContinuousClock.Instant, _ expire: @escaping Expiry) -> UInt64 {
        state.withLock { state in
            state.nextID &+= 1
            state.entries[state.nextID] = Entry(due: due, expire: expire)
            if state.timer == nil && !state.stopped {
                let nanoseconds = interval.nanoseconds
                state.timer = MultiThreadedEventLoopGroup.singleton.any().scheduleRepeatedTask(
                    initialDelay: .nanoseconds(nanoseconds), delay: .nanoseconds(nanoseconds)
                ) { [weak self] _ in self?.sweep() }
            }
            return state.nextID
        }
    }

    /// Forgets an entry (its operation ended); nothing if it fired already.
    func remove(_ id: UInt64) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Entries waiting now (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    /// Stops the timer: entries added later are never called.
    func stop() {
        let timer = state.withLock { state -> RepeatedTask? in
            state.stopped = true
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }

    deinit {
        state.withLock { $0.timer }?.cancel()
    }

    /// Calls the entries that are due (outside the lock: they resume continuations and close
    /// connections), and keeps those that ask to be called again.
    func sweep(now: ContinuousClock.Instant = .now) {
        let due = state.withLock { state -> [(UInt64, Expiry)] in
            var due: [(UInt64, Expiry)] = []
            for (id, entry) in state.entries where entry.due <= now {
                due.append((id, entry.expire))
            }
            for (id, _) in due { state.entries.removeValue(forKey: id) }
            return due
        }
        for (id, expire) in due {
            guard let next = expire() else { continue }
            state.withLock { $0.entries[id] = Entry(due: next, expire: expire) }
        }
    }
}
