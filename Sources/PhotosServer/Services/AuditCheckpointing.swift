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

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            await checkpoint()
        }
    }

    private func checkpoint() async {
        do {
            if let checkpoint = try await services.audit.checkpoint() {
                logger.debug("audit checkpoint written", metadata: ["number": "\(checkpoint.number)", "trails": "\(checkpoint.heads.count)"])
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
