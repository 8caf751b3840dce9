import AuditTrail
import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import Synchronization

/// Whether this photosd can do its work now (`GET /readyz`, and the metrics `photosd_storage_up`
/// and `photosd_audit_checkpoint_age_seconds`), as against merely running (`/healthz`):
///
/// 1. `started`: migrated, keys read (the application is prepared);
/// 2. `storage`: a read answers within `deadline`;
/// 3. `writer`: a write transaction goes through within `deadline` (SQLite's one writer, or a
///    PostgreSQL connection that can write: not a read-only standby, not a stuck pool);
/// 4. `log`: the log extends the newest tree head the signing key signed (else no checkpoint is
///    signed: a restored backup, a promoted standby that lost rows, rows altered);
/// 5. `checkpoint`: no audit row has waited longer than `audit.checkpointMaxAgeSeconds` for a
///    checkpoint to sign it (an idle database, every row covered, is ready however old its newest
///    checkpoint is).
///
/// What a failed check says names the check and what was seen, never the database's location,
/// a URL or an error's text (which may carry either): those go to the log.
struct Readiness: Sendable {
    let database: any DatabaseStore
    let started: ReadyGate
    let checkpointMaxAgeSeconds: Int
    /// Whether signing the log is refused (`LogFork`).
    var signing = LogSigningStatus()
    var deadline: Duration = .seconds(2)
    var now: @Sendable () -> Date = Date.init
    /// The oldest uncovered row's time as last read (`.some(nil)`: every row was covered): what
    /// `checkpointAgeSeconds` reports while storage does not answer — those rows stay uncovered,
    /// so their age goes on growing — rather than nothing.
    private let lastOldest = LastRead<String?>()

    enum Check: String, Sendable {
        case started, storage, writer, checkpoint, log
    }

    /// What the checks found.
    struct Report: Sendable {
        /// The first check that failed, if any.
        var failed: Check?
        /// Why, in words safe to answer with.
        var reason = ""
        /// Seconds the oldest row no checkpoint covers has waited (0: all covered); nil when
        /// storage did not say.
        var checkpointAgeSeconds: Double?
        /// Whether storage answered (the read and the write).
        var storageUp: Bool { failed != .storage && failed != .writer && failed != .started }
    }

    /// Runs the checks in order, stopping at the first that fails.
    func check() async -> Report {
        guard started.isOpen else { return Report(failed: .started, reason: "photosd is starting (migrations, keys)") }
        let database = database
        // While storage does not answer, the checkpoint age from the last read goes on.
        let remembered = lastOldest.value.withLock { $0 }.map { secondsSince($0) }
        switch await Self.within(deadline, { try await database.read { try await $0.queryOne("SELECT 1") } }) {
        case .success: break
        case .failure(let failure): return Report(failed: .storage, reason: "storage \(failure.words(deadline))", checkpointAgeSeconds: remembered)
        }
        switch await Self.within(deadline, { try await database.write { try await $0.queryOne("SELECT 1") } }) {
        case .success: break
        case .failure(let failure): return Report(failed: .writer, reason: "a write \(failure.words(deadline))", checkpointAgeSeconds: remembered)
        }
        if let fork = signing.current {
            return Report(failed: .log, reason: "refusing to sign the audit log: \(fork)", checkpointAgeSeconds: remembered)
        }
        let oldest: String?
        switch await Self.within(deadline, { try await database.read { try await AuditCheckpoints.oldestUncoveredRowTime(on: $0) } }) {
        case .success(let value): oldest = value
        case .failure(let failure): return Report(failed: .storage, reason: "storage \(failure.words(deadline))", checkpointAgeSeconds: remembered)
        }
        lastOldest.value.withLock { $0 = .some(oldest) }
        let age = secondsSince(oldest)
        var report = Report(checkpointAgeSeconds: age)
        if age > Double(checkpointMaxAgeSeconds) {
            report.failed = .checkpoint
            report.reason = "the oldest audit row no checkpoint covers has waited \(Int(age)) s, longer than audit.checkpointMaxAgeSeconds (\(checkpointMaxAgeSeconds) s): checkpoints are not being written (see the log)"
        }
        return report
    }

    /// Seconds from the stored time `at` (ISO-8601) to now; 0 for none (nothing waits).
    func secondsSince(_ at: String?) -> Double {
        at.flatMap(ISO8601Timestamp.date(from:)).map { max(0, now().timeIntervalSince($0)) } ?? 0
    }

    /// Why a probe failed.
    enum Failure: Error {
        case timedOut
        case failed(kind: String)

        func words(_ deadline: Duration) -> String {
            switch self {
            case .timedOut: "did not answer within \(deadline.components.seconds) s"
            case .failed(let kind): "failed (\(kind))"
            }
        }
    }

    /// `body`'s value, or `.timedOut` once `deadline` passes — without waiting for `body` to
    /// end: a stuck writer must not hold `/readyz` (a task group would wait for its child).
    static func within<T: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async throws -> T) async -> Result<T, Failure> {
        let settled = Mutex<CheckedContinuation<Result<T, Failure>, Never>?>(nil)
        let finish: @Sendable (Result<T, Failure>) -> Void = { result in
            settled.withLock { continuation in
                continuation?.resume(returning: result)
                continuation = nil
            }
        }
        return await withCheckedContinuation { continuation in
            settled.withLock { $0 = continuation }
            let work = Task {
                do {
                    finish(.success(try await body()))
                } catch {
                    // The error's text may name the database: only its kind is said.
                    finish(.failure(.failed(kind: (error as? any DatabaseFailure)?.failureCode ?? String(describing: type(of: error)))))
                }
            }
            let timer = Task {
                try await Task.sleep(for: deadline)
                finish(.failure(.timedOut))
                work.cancel()
            }
            // Answered in time: the timer has nothing left to do (no sleeping task per probe).
            Task {
                await work.value
                timer.cancel()
            }
        }
    }
}

/// A value last read, kept across checks (a `Readiness` is copied; this is shared).
final class LastRead<Value: Sendable>: Sendable {
    let value = Mutex<Value?>(nil)
}
