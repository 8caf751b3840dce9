import AuditTrail
import Synchronization

/// Whether this photosd is refusing to sign its log (`LogFork`): set by the start's check and by
/// each checkpoint that is refused, cleared by one that is written. `/readyz` answers 503
/// `{"check": "log"}` while it is set; each refusal counts in `photosd_log_sign_refused_total`.
final class LogSigningStatus: Sendable {
    private let refusal = Mutex<LogFork?>(nil)
    private let metrics: PhotosMetrics

    /// A status that counts refusals in `metrics`.
    init(metrics: PhotosMetrics = .shared) {
        self.metrics = metrics
    }

    /// The refusal in force, if any.
    var current: LogFork? { refusal.withLock { $0 } }

    /// Records a refusal; returns whether it is news (another than the one in force), which is
    /// what the log says once rather than every round.
    @discardableResult
    func refused(_ fork: LogFork) -> Bool {
        metrics.logSignRefused()
        return refusal.withLock { current in
            defer { current = fork }
            return current != fork
        }
    }

    /// A checkpoint went through, or the check found nothing: signing is allowed again. Returns
    /// whether a refusal was in force.
    @discardableResult
    func cleared() -> Bool {
        refusal.withLock { current in
            defer { current = nil }
            return current != nil
        }
    }
}
