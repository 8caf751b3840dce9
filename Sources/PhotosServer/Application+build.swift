import Foundation
import Hummingbird
import Logging
import Navigation
import PhotosCore
import SQLiteStore
import ServiceLifecycle

/// Builds the `photosd` application: opens (and migrates) the database, wires the services,
/// the router and its middleware. `photosd`'s `@main` and the tests both call it.
///
/// The database is closed — after the server has stopped and finished its in-flight requests,
/// with a WAL checkpoint — when the application shuts down gracefully.
public func buildApplication(
    configuration: PhotosConfiguration,
    logger: Logger = Logger(label: "photosd")
) async throws -> some ApplicationProtocol {
    let database = try PhotosDatabase.open(
        path: configuration.databasePath, durability: configuration.durability,
        readerCount: configuration.readerCount, maxBatchSize: configuration.maxBatchSize,
        busyTimeoutMilliseconds: Int32(configuration.busyTimeoutMilliseconds))
    let auth = AuthService(database: database, bcryptCost: configuration.bcryptCost, tokenLifetimeSeconds: configuration.tokenLifetimeSeconds)
    let catalog = CatalogService(database: database)
    if configuration.seedDemoData {
        try await DemoData.seed(catalog)
    }
    let api = PhotosAPI(
        configuration: configuration, database: database, auth: auth, catalog: catalog,
        purchases: PurchaseService(database: database),
        sessions: SessionCoordinator(database: database, auth: auth),
        limiter: SignInLimiter(maxAttempts: configuration.signInMaxAttempts, windowSeconds: configuration.signInWindowSeconds),
        metrics: .shared)
    let router = buildRouter(api).router
    let address = "\(configuration.host):\(configuration.port)"
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "photosd"),
        services: [DatabaseService(database: database, logger: logger)],
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            logger.notice("photosd listening on \(configuration.host):\(port)", metadata: [
                "database": "\(configuration.databasePath)", "durability": "\(configuration.durability.rawValue)",
            ])
        },
        logger: logger.with(metadataKey: "address", value: "\(address)"))
}

/// The router with every route and middleware; `routes` lists what it serves.
func buildRouter(_ api: PhotosAPI) -> RouteTable {
    let router = Router(context: BasicRequestContext.self)
    // Outermost first: metrics and the request log see the final status, after errors have
    // been turned into JSON bodies. The log has the request id, method and path — never
    // headers or bodies, which may carry passwords and tokens.
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: LogRequestsMiddleware(.info))
    router.add(middleware: ErrorMiddleware())
    var table = RouteTable(router: router)
    api.addRoutes(to: &table)
    return table
}

extension Logger {
    func with(metadataKey key: String, value: Logger.MetadataValue) -> Logger {
        var copy = self
        copy[metadataKey: key] = value
        return copy
    }
}

/// Closes the database when the application shuts down; the server shuts down first (services
/// stop in reverse order), so no request is still using it.
struct DatabaseService: Service {
    let database: SQLiteDatabase
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        database.close()
        logger.notice("database closed")
    }
}

/// A few photos for a first look (`demo.seed` / `--seed-demo`), added only to an empty catalogue.
enum DemoData {
    static let photos: [NewPhoto] = [
        NewPhoto(title: "Golden Gate at dusk", priceCents: 250),
        NewPhoto(title: "Harbour in the rain", priceCents: 199),
        NewPhoto(title: "Snow, at night", priceCents: 300),
        NewPhoto(title: "Desert road", priceCents: 150),
        NewPhoto(title: "Northern lights", priceCents: 499),
    ]

    static func seed(_ catalog: CatalogService) async throws {
        guard try await catalog.list(limit: 1).isEmpty else { return }
        _ = try await catalog.importPhotos(photos, actor: .system)
    }
}
