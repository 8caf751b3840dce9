import AuditTrail
import Logging
import Navigation
import PhotosCore
import PhotosModel
import ServiceLifecycle
import Sessions

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

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            await checkpoint()
        }
        // The last round, bounded: the database may be the reason for the stop.
        let round = self
        if case .failure = await Readiness.within(finalRoundBudget, { await round.checkpoint() }) {
            logger.warning("the final audit checkpoint did not finish within \(finalRoundBudget) of the stop (the database did not answer); the next start writes it")
        }
    }

    private func checkpoint() async {
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
            // Storage trouble is reported by the requests that meet it; the next round retries.
            logger.warning("writing an audit checkpoint failed", metadata: ["error": "\(error)"])
        }
        do {
            try await FunnelMarks.catchUp(services.database)
        } catch {
            logger.warning("updating the purchase funnel's marks failed", metadata: ["error": "\(error)"])
        }
    }
}
