import Foundation
import Logging
import PhotosCore
import PhotosModel
import ServiceLifecycle
import Synchronization
import Sessions

/// Ends the sessions idle past `sessions.idleExpirySeconds` that no request has ended yet, and
/// prunes tokens, sign-in attempts and trusted addresses past their windows: at start, then every
/// tenth of the expiry (at most every ten minutes), until shutdown. Several instances on one
/// PostgreSQL database take turns through a lease (`maintenance_leases`): one sweeps at a time.
struct SessionSweeping: Service {
    let services: PhotosServices
    let logger: Logger
    /// When a round last finished (`photosd_session_sweep_age_seconds`).
    let progress: SweepProgress
    /// Opened once the schema is there (the application is prepared).
    let ready: ReadyGate
    /// This instance, as the lease names it.
    let holder = "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(SecureToken.random(byteCount: 6))"

    var interval: Duration {
        let expiry = services.sessions.idleExpirySeconds
        return .seconds(expiry == 0 ? 600 : max(1, min(600, expiry / 10)))
    }

    func run() async throws {
        await withTaskCancellationOrGracefulShutdownHandler { await ready.wait() } onCancelOrGracefulShutdown: { ready.open() }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let report = try await services.sessions.sweep(holder: holder)
                progress.finished()
                if report.ended > 0 || report.pruned != .init() {
                    logger.info("session sweep", metadata: [
                        "ended": "\(report.ended)", "tokensPruned": "\(report.pruned.tokens)",
                        "signInAttemptsPruned": "\(report.pruned.signInAttempts)", "trustedAddressesPruned": "\(report.pruned.trustedAddresses)",
                    ])
                }
            } catch {
                // Storage trouble is reported by the requests that meet it; try again later.
                logger.warning("session sweep failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
        try? await services.sessions.releaseSweepLease(holder: holder)
    }
}

/// When this instance's session sweep last finished a round without an error: a sweep that
/// stopped finishing (storage trouble, a lease never given back) shows as a growing age.
final class SweepProgress: Sendable {
    private let last = Mutex<Date?>(nil)

    func finished(at date: Date = Date()) { last.withLock { $0 = date } }

    var lastFinished: Date? { last.withLock { $0 } }
}
