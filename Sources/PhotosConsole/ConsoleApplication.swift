import DatabaseAccess
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import PhotosCore
import PhotosListener
import PhotosModel
import ServiceLifecycle
import Sessions

/// Builds the operator console: an application of its own on `console.host:console.port`
/// (the API's port never serves it), over the same services as the API. `buildApplication` runs
/// it as one of photosd's services when `console.enabled` is set; until `isReady` (the database
/// migrated, the keys read), every page is `503`.
public func buildConsole(
    services: PhotosServices, configuration: PhotosConfiguration, proxies: TrustedProxies = .none, logger: Logger,
    isReady: @escaping @Sendable () -> Bool
) throws -> some ApplicationProtocol & Service {
    let pages = try ConsolePages()
    let routes = ConsoleRoutes(
        services: services,
        consoleSessions: ConsoleSessions(
            database: services.database, idleMinutes: configuration.consoleSessionMinutes, bcryptCost: configuration.bcryptCost,
            limits: SignInLimits(
                perUsernameAndAddress: configuration.signInMaxAttempts, perAddress: configuration.signInMaxAttemptsPerAddress,
                perUsername: configuration.signInMaxAttemptsPerUsername, windowSeconds: configuration.signInWindowSeconds)),
        cookies: ConsoleCookies(secure: configuration.consoleSecureCookies),
        pages: pages, verifier: BackgroundVerify(), logger: logger)
    let router = Router(context: ConsoleRequestContext.self)
    // First: the sign-in limits and the operator trail's addresses are the client's.
    router.add(middleware: ClientAddressMiddleware(proxies: proxies))
    router.add(middleware: ConsoleHeadersMiddleware(pages: pages))
    router.add(middleware: ConsoleReadyMiddleware(isReady: isReady))
    router.add(middleware: ConsoleSessionMiddleware(sessions: routes.consoleSessions))
    routes.add(to: router)
    return Application(
        router: router,
        // The API's guards and timeouts, with the console's own body limit (a form) and cap on
        // connections.
        server: .guarded(ListenerLimits(
            name: "console", maxBodyBytes: ConsoleForm.maxBytes, requestTimeoutSeconds: configuration.requestTimeoutSeconds,
            idleTimeoutSeconds: configuration.idleTimeoutSeconds, maxConnections: configuration.consoleMaxConnections)),
        configuration: .init(address: .hostname(configuration.consoleHost, port: configuration.consolePort), serverName: "photosd-console"),
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.consolePort
            logger.notice("photosd console listening on \(configuration.consoleHost):\(port)")
        },
        logger: logger)
}
