import AuditTrail
import DatabaseAccess
import Hummingbird
import Foundation
import Logging
import PhotosCore
import PhotosListener
import PhotosModel
import ServiceLifecycle

/// `/metrics` (Prometheus text) on a listener of its own (`metrics.host`, `metrics.port`;
/// loopback by default): what it tells — request counts and latencies per route, actions per
/// outcome, audit rows written, the writer's batches — is for the operator's Prometheus, not for
/// the public that reaches the API's port.
func buildMetricsListener(
    metrics: PhotosMetrics, database: any DatabaseStore, readiness: Readiness, sweep: SweepProgress, configuration: PhotosConfiguration,
    logger: Logger, listening: @escaping @Sendable (Int) -> Void = { _ in }
) -> some ApplicationProtocol & Service {
    Application(
        router: buildMetricsRouter(metrics: metrics, database: database, readiness: readiness, sweep: sweep),
        // Small and fixed: one scraper, perhaps two, and a person with curl.
        server: .guarded(ListenerLimits(
            name: "metrics", maxBodyBytes: 1_024, requestTimeoutSeconds: configuration.requestTimeoutSeconds,
            idleTimeoutSeconds: configuration.idleTimeoutSeconds, maxConnections: 16)),
        configuration: .init(address: .hostname(configuration.metricsHost, port: configuration.metricsPort), serverName: "photosd-metrics"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.metricsPort
            logger.notice("photosd metrics listening on \(configuration.metricsHost):\(port)")
            listening(port)
        },
        logger: logger)
}

/// The metrics listener's one route, `GET /metrics` (anything else is 404). Each scrape runs
/// the readiness checks (a few index seeks, each bounded by their deadline) and reads
/// `/proc/self`.
func buildMetricsRouter(metrics: PhotosMetrics, database: any DatabaseStore, readiness: Readiness, sweep: SweepProgress) -> Router<BasicRequestContext> {
    let router = Router(context: BasicRequestContext.self)
    router.on("/metrics", method: .get) { _, _ in
        var figures = PhotosMetrics.Figures(readiness: await readiness.check(), process: ProcessFigures.read())
        let now = readiness.now()
        figures.sweepAgeSeconds = sweep.lastFinished.map { max(0, now.timeIntervalSince($0)) }
        if figures.readiness?.storageUp == true,
           case .success(let oldest) = await Readiness.within(readiness.deadline, { try await database.read { try await AuditCheckpoints.oldestLiveRowTime(on: $0) } }) {
            figures.oldestAuditRowAgeSeconds = readiness.secondsSince(oldest)
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: metrics.render(writer: (database as? any GroupCommitStore)?.writerStatistics, figures: figures))))
    }
    return router
}
