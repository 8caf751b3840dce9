import Foundation

/// A value behind a lock, for small shared counters and caches.
public final class LockedValue<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written with `lock` held.
    private let lock = NSLock()
    private var value: Value

    /// Wraps `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
