import Synchronization

/// Counts events per key (a client address) in fixed windows and says when one is over its
/// limit, and for how long: what `limits.sessionsPerMinutePerAddress` uses.
///
/// In memory, per process: several instances on one database each allow the limit. Bounded:
/// when it holds more than `capacity` keys, windows that have ended are dropped.
final class AddressLimiter: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }

    private let windows = Mutex<[String: Window]>([:])
    /// Events allowed per key and window; 0 allows everything.
    let limit: Int
    let window: Duration
    private let capacity: Int

    init(limit: Int, window: Duration, capacity: Int = 100_000) {
        self.limit = limit
        self.window = window
        self.capacity = capacity
    }

    /// Counts one event for `key`: nil when it is allowed, else how long until the key's
    /// window ends (the `Retry-After`).
    func admit(_ key: String, now: ContinuousClock.Instant = .now) -> Duration? {
        guard limit > 0 else { return nil }
        return windows.withLock { windows in
            if windows.count > capacity {
                windows = windows.filter { now - $0.value.start < window }
            }
            var current = windows[key] ?? Window(start: now, count: 0)
            if now - current.start >= window { current = Window(start: now, count: 0) }
            guard current.count < limit else { return current.start + window - now }
            current.count += 1
            windows[key] = current
            return nil
        }
    }
}
