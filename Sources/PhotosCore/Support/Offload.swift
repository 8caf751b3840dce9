import Foundation

/// Runs CPU-heavy blocking work (bcrypt) on Dispatch's global pool, at most `limit` at a time,
/// so that it neither blocks Swift's cooperative threads or the event loops nor starves them.
public final class Offload: Sendable {
    private let slots: DispatchSemaphore
    private let queue = DispatchQueue(label: "photosd.offload", attributes: .concurrent)

    /// Allows `limit` jobs to run at once (default: the number of cores).
    public init(limit: Int = ProcessInfo.processInfo.activeProcessorCount) {
        slots = DispatchSemaphore(value: max(1, limit))
    }

    /// Runs `work` off the caller's thread and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { [slots] in
                slots.wait()
                let value = work()
                slots.signal()
                continuation.resume(returning: value)
            }
        }
    }
}
