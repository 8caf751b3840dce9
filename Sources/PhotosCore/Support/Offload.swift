import Foundation
import PhotosModel

/// Runs CPU-heavy blocking work (bcrypt) off Swift's cooperative threads and the event loops,
/// at most `limit` jobs at a time, so that a flood of sign-ins cannot take every core from the
/// other requests. Waiting for a slot suspends the caller; it blocks no thread.
public final class Offload: Sendable {
    private let slots: AsyncSlots
    private let queue = DispatchQueue(label: "photosd.offload", attributes: .concurrent)
    /// The most jobs that run at once.
    public let limit: Int

    /// Allows `limit` jobs at once; by default half the cores (at least one), leaving the rest
    /// to everything else.
    public init(limit: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)) {
        self.limit = max(1, limit)
        self.slots = AsyncSlots(count: max(1, limit))
    }

    /// Runs `work` on a background thread once a slot is free and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await slots.acquire()
        let value = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
        await slots.release()
        return value
    }
}
