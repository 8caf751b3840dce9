import Logging
import Synchronization

/// Whether storage is failing now, so that a disk-full episode is logged once when it starts
/// and once when it ends, not once per refused request.
final class StorageHealth: Sendable {
    private let failing = Atomic<Bool>(false)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// A request met a storage failure that can pass (answered `503`).
    func failed(_ error: any Error) {
        if failing.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            logger.error("storage unavailable; answering 503 until a write succeeds", metadata: ["error": "\(error)"])
        }
    }

    /// A request succeeded.
    func succeeded() {
        // One relaxed load on the hot path; the exchange only while an episode is open.
        guard failing.load(ordering: .relaxed) else { return }
        if failing.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged {
            logger.notice("storage available again")
        }
    }
}
