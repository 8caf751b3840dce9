import AuditTrail
import DatabaseAccess
import Foundation
import Hummingbird
import Logging
import Navigation
import PhotosCore
import PhotosConsole
import PhotosListener
import PhotosModel
import PhotosStorage
import PostgresNIO
import ServiceLifecycle
import Sessions

/// Builds the `photosd` application: opens (and migrates) the database, wires the services,
/// the router and its middleware. `photosd`'s `@main` and the tests both call it.
///
/// The database is a SQLite file or a PostgreSQL database (`database.path` a `postgres://` URL);
/// it is closed — after the server has stopped and finished its in-flight requests (SQLite: with
/// a WAL checkpoint; PostgreSQL: the connection pool stops) — when the application shuts down
/// gracefully.
public func buildApplication(
    configuration given: PhotosConfiguration,
    logger: Logger = Logger(label: "photosd")
) async throws -> some ApplicationProtocol {
    try await buildApplication(configuration: given, logger: logger, metricsListening: { _ in })
}

/// `buildApplication`, telling `metricsListening` the port the metrics listener took (for
/// tests, whose listeners take any free port).
func buildApplication(
    configuration given: PhotosConfiguration,
    logger: Logger = Logger(label: "photosd"),
    metricsListening: @escaping @Sendable (Int) -> Void
) async throws -> some ApplicationProtocol {
    let configuration = DescriptorBudget.fitted(given, logger: logger)
    let header = TrustedProxies.Header(configured: configuration.forwardedHeader) ?? .xForwardedFor
    let proxies: TrustedProxies
    let consoleProxies: TrustedProxies
    do {
        proxies = try TrustedProxies(parsing: configuration.trustedProxies, header: header)
    } catch {
        throw PhotosError.badRequest("configuration server.trustedProxies: \(error)")
    }
    do {
        consoleProxies = try TrustedProxies(parsing: configuration.consoleTrustedProxies, header: header)
    } catch {
        throw PhotosError.badRequest("configuration console.trustedProxies: \(error)")
    }
    let opened = try await PhotosDatabase.openForApplication(configuration, logger: logger)
    let database = opened.database
    let services: PhotosServices
    do {
        services = try PhotosServices(configuration: configuration, database: database)
    } catch {
        await database.close()
        throw error
    }
    // Before the server listens, once the services run (PostgreSQL's pool among them): the
    // migrations, the secrets read (or created) — a bad file stops the start, not a request —
    // and the demo photos.
    let ready = ReadyGate()
    let signing = LogSigningStatus()
    let prepare: @Sendable () async throws -> Void = {
        try await opened.prepare()
        // A key file made now is said once, with where it is (never its contents): an operator
        // must keep it — backed up, beside the database — as long as the data it protects.
        let keyFiles = [
            (configuration.resolvedAuditSigningKeyPath, "audit signing key (audit.signingKeyPath)"),
            (configuration.resolvedSecretKeyPath, "server secret (auth.secretKeyPath)"),
        ].filter { !FileManager.default.fileExists(atPath: $0.0) }
        _ = try await services.audit.checkedSigningKey()
        // The log's name: a configured one that is not the signed one stops the start.
        _ = try await services.audit.origin()
        // The database extends what the key signed (else photosd serves, and signs nothing).
        if let fork = try await services.audit.logFork() {
            signing.refused(fork)
            logger.error("refusing to sign the audit log: \(fork); \(LogFork.waysOn)")
        }
        try services.idempotency.loadSecret()
        for (path, what) in keyFiles where FileManager.default.fileExists(atPath: path) {
            logger.notice("created the \(what): keep it and back it up with the database", metadata: ["path": "\(path)"])
        }
        if configuration.seedDemoData {
            try await DemoData.seed(services.catalog)
        }
        ready.open()
    }
    let readiness = Readiness(
        database: database, started: ready, checkpointMaxAgeSeconds: configuration.auditCheckpointMaxAgeSeconds, signing: signing)
    let sweep = SweepProgress()
    let api = PhotosAPI(
        services: services, bodyLimit: configuration.maxBodyBytes, metrics: .shared, storage: StorageHealth(logger: logger),
        sessionsPerAddress: AddressLimiter(limit: configuration.sessionsPerMinutePerAddress, window: .seconds(60)),
        longPolls: HeldSlots(perKey: configuration.longPollsPerAddress), readiness: readiness,
        logPublic: configuration.logPublic, checkpointIntervalSeconds: configuration.auditCheckpointIntervalSeconds,
        receiptsMaxRows: configuration.receiptsMaxRows)
    // The API's address as every server log line says it: the port it really listens on once it
    // does (with `server.port` 0, the one the system picked), not the configured 0.
    // (A value the handlers turn into text as each line is written.)
    let boundAddress = BoundAddress(host: configuration.host, port: configuration.port)
    // PostgreSQL's pool first, so that it stops last: after the server, the final checkpoint
    // and the store's close.
    let pool: [any Service] = opened.pools
    let console: [any Service] = configuration.consoleEnabled
        ? [NamedListener(
            try buildConsole(services: services, configuration: configuration, proxies: consoleProxies, logger: logger, isReady: { ready.isOpen }),
            name: "console", address: "\(configuration.consoleHost):\(configuration.consolePort)",
            settings: "console.port, PHOTOSD_CONSOLE_PORT or --console-port; or console.enabled false, --no-console")] : []
    let metricsListener: [any Service] = configuration.metricsEnabled
        ? [NamedListener(
            buildMetricsListener(
                metrics: api.metrics, database: database, readiness: readiness, sweep: sweep, configuration: configuration, logger: logger,
                listening: metricsListening),
            name: "metrics listener", address: "\(configuration.metricsHost):\(configuration.metricsPort)",
            settings: "metrics.port, PHOTOSD_METRICS_PORT or --metrics-port; or metrics.enabled false, --no-metrics")] : []
    // The witnesses' client (audit.witnesses): asked after each checkpoint, in the background.
    let cosigning = configuration.auditWitnesses.isEmpty
        ? nil : try WitnessCosigning(witnesses: configuration.auditWitnesses, database: database, logger: logger)
    var application = Application(
        router: buildRouter(api, proxies: proxies, tracing: !configuration.tracingOTLPEndpoint.isEmpty),
        server: .guarded(ListenerLimits(
            name: "API", maxBodyBytes: configuration.maxBodyBytes, requestTimeoutSeconds: configuration.requestTimeoutSeconds,
            idleTimeoutSeconds: configuration.idleTimeoutSeconds, maxConnections: configuration.serverMaxConnections,
            answerHeaders: [APIVersion.header: String(APIVersion.current)],
            maxConnectionsPerAddress: configuration.serverMaxConnectionsPerAddress, trustedProxies: proxies)),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "photosd"),
        services: pool + [
            DatabaseService(database: database, logger: logger),
        ] + console + metricsListener + [
            // Before the background writers, so that it stops after them (services stop in reverse
            // order) and before the database closes: its final checkpoint covers every row this
            // process wrote, the sweep's expiries included.
            AuditCheckpointing(
                services: services, interval: .seconds(configuration.auditCheckpointIntervalSeconds), logger: logger, signing: signing,
                // Half the stop's budget: the server's requests and the store's close have the rest.
                finalRoundBudget: .milliseconds(configuration.shutdownTimeoutSeconds * 500),
                written: { cosigning?.checkpointWritten() }),
        ] + (cosigning.map { [$0] } ?? []) + [
            IdempotencyPruning(services: services, logger: logger, ready: ready),
            SessionSweeping(services: services, logger: logger, progress: sweep, ready: ready),
        ],
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            boundAddress.port = port
            logger.notice("photosd listening on \(configuration.host):\(port)", metadata: [
                "database": "\(database)", "durability": "\(configuration.durability.rawValue)",
            ])
        },
        logger: logger.with(metadataKey: "address", value: .stringConvertible(boundAddress)))
    application.beforeServerStarts(perform: prepare)
    return application
}

/// The router with every route and middleware.
func buildRouter(_ api: PhotosAPI, proxies: TrustedProxies = .none, tracing: Bool = false) -> Router<PhotosRequestContext> {
    let router = Router(context: PhotosRequestContext.self)
    // Outermost first: the client's address (from a trusted proxy's headers) before anything
    // reads it; metrics and the request log see the final status, after errors have been turned
    // into JSON bodies. The log has the client's address, the method, the path (a session id
    // only as its digest) and the status — never headers, bodies or queries, which may carry
    // secrets.
    router.add(middleware: ClientAddressMiddleware(proxies: proxies))
    // The request's span (tracing.otlpEndpoint): outside the log, so that its line carries the
    // trace_id. Left out when tracing is off, where it would only cost.
    if tracing { router.add(middleware: RedactedTracingMiddleware()) }
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: RequestLogMiddleware(level: .info))
    // The API version (`Photos-API-Version`) on every /v1 answer, errors included.
    router.add(middleware: APIVersionMiddleware())
    router.add(middleware: ErrorMiddleware(storage: api.storage))
    router.add(middleware: RequestDeadlineMiddleware())
    api.addRoutes(to: router)
    return router
}

/// The API's `host:port`, the port set once it listens. `@unchecked Sendable`: the port is
/// read and written only under the lock.
private final class BoundAddress: CustomStringConvertible, @unchecked Sendable {
    private let lock = NSLock()
    private let host: String
    private var bound: Int

    init(host: String, port: Int) {
        self.host = host
        self.bound = port
    }

    var port: Int {
        get { lock.withLock { bound } }
        set { lock.withLock { bound = newValue } }
    }

    var description: String { "\(host):\(port)" }
}

extension Logger {
    func with(metadataKey key: String, value: Logger.MetadataValue) -> Logger {
        var copy = self
        copy[metadataKey: key] = value
        return copy
    }
}
