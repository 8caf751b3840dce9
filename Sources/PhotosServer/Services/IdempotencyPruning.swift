import Logging
import Navigation
import PhotosModel
import ServiceLifecycle
import Sessions

/// Deletes the answers kept for `Idempotency-Key` retries once they are older than
/// `idempotency.retentionSeconds`: at start, then every tenth of the retention (at most every
/// ten minutes), until shutdown.
struct IdempotencyPruning: Service {
    let services: PhotosServices
    let logger: Logger
    /// Opened once the schema is there (the application is prepared).
    let ready: ReadyGate

    var interval: Duration {
        .seconds(max(1, min(600, services.idempotency.retention / 10)))
    }

    func run() async throws {
        // Waits for the schema. A stop before the application was prepared (a failed start)
        // opens the gate to end the wait, and the loop below does not start.
        await withTaskCancellationOrGracefulShutdownHandler { await ready.wait() } onCancelOrGracefulShutdown: { ready.open() }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let removed = try await services.pruneIdempotencyKeys()
                if removed > 0 { logger.debug("pruned idempotency keys", metadata: ["count": "\(removed)"]) }
            } catch {
                // Storage trouble is reported by the requests that meet it; try again later.
                logger.warning("pruning idempotency keys failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
