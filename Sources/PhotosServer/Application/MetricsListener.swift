import DatabaseAccess
import Hummingbird
import Logging
import PhotosCore
import PhotosListener
import ServiceLifecycle

/// `/metrics` (Prometheus text) on a listener of its own (`metrics.host`, `metrics.port`;
/// loopback by default): what it tells — request counts and latencies per route, actions per
/// outcome, audit rows written, the writer's batches — is for the operator's Prometheus, not for
/// the public that reaches the API's port.
func buildMetricsListener(
    metrics: PhotosMetrics, database: any DatabaseStore, configuration: PhotosConfiguration, logger: Logger,
    listening: @escaping @Sendable (Int) -> Void = { _ in }
) -> some ApplicationProtocol & Service {
    Application(
        router: buildMetricsRouter(metrics: metrics, database: database),
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

/// The metrics listener's one route, `GET /metrics` (anything else is 404).
func buildMetricsRouter(metrics: PhotosMetrics, database: any DatabaseStore) -> Router<BasicRequestContext> {
    let router = Router(context: BasicRequestContext.self)
    router.on("/metrics", method: .get) { _, _ in
        Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: metrics.render(writer: (database as? any GroupCommitStore)?.writerStatistics))))
    }
    return router
}
