import Synchronization

/// Long-held requests per key, at most `perKey` at once: the console's live streams per
/// operator, the API's long polls per client address. Each one holds a connection and wakes for
/// a while; without a bound, one client opening many would hold them all for everyone.
public final class HeldSlots<Key: Hashable & Sendable>: Sendable {
    /// The most one key holds at once.
    public let perKey: Int
    private let open = Mutex<[Key: Int]>([:])

    /// Slots for `perKey` at once per key.
    public init(perKey: Int) {
        self.perKey = perKey
    }

    /// Takes a slot for `key`; false when it holds `perKey` already.
    public func take(_ key: Key) -> Bool {
        open.withLock { open in
            guard open[key, default: 0] < perKey else { return false }
            open[key, default: 0] += 1
            return true
        }
    }

    /// Gives a slot of `key`'s back.
    public func release(_ key: Key) {
        open.withLock { open in
            open[key, default: 1] -= 1
            if open[key] == 0 { open[key] = nil }
        }
    }
}
