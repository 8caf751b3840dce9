import Logging
import Synchronization

/// Whether storage is failing now, so that a disk-full episode is logged once when it starts
/// and once when it ends, not once per refused request.
///
/// A full disk flaps: a failed transaction gives its space back, so a smaller write may pass
/// between refusals. An episode therefore ends only when writes succeed after `quietPeriod`
/// without a failure.
final class StorageHealth: Sendable {
    private let failing = Atomic<Bool>(false)
    private let lastFailure = Mutex(ContinuousClock.now)
    private let quietPeriod: Duration
    private let logger: Logger

    init(logger: Logger, quietPeriod: Duration = .seconds(2)) {
        self.logger = logger
        self.quietPeriod = quietPeriod
    }

    /// A request met a storage failure that can pass (answered `503`).
    func failed(_ error: any Error) {
        lastFailure.withLock { $0 = .now }
        if failing.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            logger.error("storage unavailable; answering 503 until writes succeed again", metadata: ["error": "\(error)"])
        }
    }

    /// A write request succeeded.
    func succeeded() {
        // One relaxed load on the hot path; the rest only during an episode.
        guard failing.load(ordering: .relaxed) else { return }
        guard lastFailure.withLock({ ContinuousClock.now - $0 }) >= quietPeriod else { return }
        if failing.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged {
            logger.notice("storage available again")
        }
    }
}
