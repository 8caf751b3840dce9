import AuditTrail
import Logging
import Navigation
import PhotosCore
import PhotosModel
import ServiceLifecycle
import Sessions
import Synchronization

/// Writes an audit checkpoint every `audit.checkpointIntervalSeconds` when any trail changed,
/// and a last one at graceful shutdown (this service stops after the HTTP server has finished
/// its requests and before the database closes); each round also brings the purchase funnel's
/// marks up to date (`FunnelMarks`).
struct AuditCheckpointing: Service {
    let services: PhotosServices
    let interval: Duration
    let logger: Logger
    /// Whether signing is refused (`/readyz`'s `log` check).
    let signing: LogSigningStatus
    /// How long the last round, at shutdown, may take (`server.shutdownTimeoutSeconds` bounds the
    /// whole stop): against a database that does not answer it is given up, logged, rather than
    /// wait a connect timeout per step.
    var finalRoundBudget: Duration = .seconds(10)
    /// Told after each checkpoint written (the witnesses' client asks them for it).
    var written: @Sendable () -> Void = {}
    /// The failed rounds since the last that went through.
    private let failures = FailedRounds()

    func run() async throws {
        var wait = interval
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let sleep = wait
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: sleep) }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            // After a round the database failed, the next comes in a second (or the interval,
            // if shorter): once storage answers again, the rows that waited through the outage
            // are signed (and `/readyz`'s checkpoint check passes) within about a second, not
            // an interval later.
            wait = await checkpoint() ? interval : min(.seconds(1), interval)
        }
        // The last round, bounded: the database may be the reason for the stop.
        let round = self
        if case .failure = await Readiness.within(finalRoundBudget, { await round.checkpoint() }) {
            logger.warning("the final audit checkpoint did not finish within \(finalRoundBudget) of the stop (the database did not answer); the next start writes it")
        }
    }

    /// One round; false when storage failed it (a refusal to sign is not a failure to retry sooner).
    @discardableResult
    private func checkpoint() async -> Bool {
        do {
            if let checkpoint = try await services.audit.checkpoint() {
                logger.debug("audit checkpoint written", metadata: ["number": "\(checkpoint.number)", "trails": "\(checkpoint.heads.count)"])
                written()
                if signing.cleared() { logger.notice("the audit log is signed again", metadata: ["checkpoint": "\(checkpoint.number)"]) }
            } else if signing.current != nil, try await services.audit.logFork() == nil {
                // Nothing new to sign, and the database extends what the key signed again (a
                // new log, a newer backup restored under a running photosd).
                signing.cleared()
                logger.notice("the audit log extends the signed tree head again")
            }
        } catch let fork as LogFork {
            // Nothing was signed. Said once per refusal (the count and /readyz say it stays).
            if signing.refused(fork) {
                logger.error("refusing to sign the audit log: \(fork)")
            }
        } catch {
            // Storage trouble is reported by the requests that meet it; the next round retries
            // (in a second): said at the first failure, then once a minute.
            if failures.failed() {
                logger.warning("writing an audit checkpoint failed; retrying every second", metadata: ["error": "\(error)"])
            }
            return false
        }
        if let rounds = failures.succeeded() {
            logger.notice("audit checkpoints are written again", metadata: ["failedRounds": "\(rounds)"])
        }
        do {
            try await FunnelMarks.catchUp(services.database)
        } catch {
            logger.warning("updating the purchase funnel's marks failed", metadata: ["error": "\(error)"])
            return false
        }
        return true
    }
}

/// The rounds failed in a row: what to say once a minute, not every second.
final class FailedRounds: Sendable {
    private let state = Mutex<(count: Int, logged: ContinuousClock.Instant?)>((0, nil))

    /// Counts a failed round; true when it is to be logged (the first, then once a minute).
    func failed(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            state.count += 1
            guard state.logged.map({ now - $0 >= .seconds(60) }) ?? true else { return false }
            state.logged = now
            return true
        }
    }

    /// A round went through: the count of failed rounds before it, if any (and starts over).
    func succeeded() -> Int? {
        state.withLock { state in
            defer { state = (0, nil) }
            return state.count > 0 ? state.count : nil
        }
    }
}
