import ArgumentParser
import Configuration
import Foundation
import Logging
import PhotosBuildInfo
import PhotosCore
import PhotosModel
import PhotosListener
import PhotosServer
import ServiceLifecycle
import UnixSignals

/// `photosd`: the HTTP/JSON daemon.
@main
struct Photosd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photosd",
        abstract: "Serve the photo shop's HTTP/JSON API (docs/openapi.yaml) over an embedded SQLite file or a PostgreSQL database.",
        discussion: """
            Settings come from, highest first: these flags, PHOTOSD_… environment variables \
            (e.g. PHOTOSD_SERVER_PORT, PHOTOSD_DATABASE_PATH, PHOTOSD_DATABASE_DURABILITY), the \
            config file (--config, else $PHOTOSD_CONFIG, else config/photosd.json if present), \
            then the built-in defaults: 127.0.0.1:8080, data/photos.db, durability full, the \
            operator console on 127.0.0.1:8081 (its own listener). The \
            database is a SQLite file (created, with its directory, and migrated on start) or a \
            postgres:// URL (migrated on start; several photosd may share it). SIGTERM or SIGINT \
            stops accepting, finishes in-flight requests, checkpoints the WAL (SQLite), closes \
            the database and exits 0 (within server.shutdownTimeoutSeconds, or it is cut short).
            """,
        version: PhotosBuild.versionLine)

    @Option(help: "The JSON config file.") var config: String?
    @Option(help: "Address to listen on (server.host).") var host: String?
    @Option(help: "Port to listen on, 0 for any free port (server.port).") var port: Int?
    @Option(help: "The database: a SQLite file, or a postgres://user[:password]@host[:port]/dbname URL (database.path).") var db: String?
    @Flag(help: "Seed demo photos into an empty catalogue (demo.seed).") var seedDemo = false
    @Option(help: "Port of the operator console, 0 for any free port (console.port).") var consolePort: Int?
    @Flag(help: "Serve no operator console (console.enabled false).") var noConsole = false
    @Option(help: "Port of the /metrics listener, 0 for any free port (metrics.port).") var metricsPort: Int?
    @Flag(help: "Serve no /metrics listener (metrics.enabled false).") var noMetrics = false

    func run() async throws {
        // Until HangUpNotice traps it: a SIGHUP while starting must not end photosd either.
        signal(SIGHUP, SIG_IGN)
        var overrides: [String: ConfigValue] = [:]
        if let host { overrides["server.host"] = .init(.string(host), isSecret: false) }
        if let port { overrides["server.port"] = .init(.int(port), isSecret: false) }
        if let db { overrides["database.path"] = .init(.string(db), isSecret: false) }
        if seedDemo { overrides["demo.seed"] = .init(.bool(true), isSecret: false) }
        if let consolePort { overrides["console.port"] = .init(.int(consolePort), isSecret: false) }
        if noConsole { overrides["console.enabled"] = .init(.bool(false), isSecret: false) }
        if let metricsPort { overrides["metrics.port"] = .init(.int(metricsPort), isSecret: false) }
        if noMetrics { overrides["metrics.enabled"] = .init(.bool(false), isSecret: false) }
        let configuration = try await PhotosConfiguration.load(filePath: config, overrides: overrides)
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let json = configuration.logFormat == "json"
        LogLineSink.standard.setFlushMilliseconds(configuration.logFlushMilliseconds)
        // Before logging: log lines written inside a span carry its trace_id.
        let tracing = try PhotosTracing.bootstrap(configuration)
        LoggingSystem.bootstrap({ label, metadataProvider in
            var handler: any LogHandler = json
                ? JSONLogHandler(label: label) : TextLogHandler(label: label, metadataProvider: metadataProvider)
            handler.metadataProvider = metadataProvider
            handler.logLevel = level
            return handler
        }, metadataProvider: tracing.metadataProvider)
        let logger = Logger(label: "photosd")
        for warning in configuration.warnings { logger.warning("\(warning)") }
        let app = try await buildApplication(configuration: configuration, logger: logger)
        // SIGTERM and SIGINT shut down gracefully; whatever has not ended after
        // server.shutdownTimeoutSeconds (a database that does not answer, say) is cancelled, and
        // a process still not done 5 s later ends anyway: a stop always stops.
        // The exporter first, so that it stops last: the spans of the final requests are sent.
        let services: [ServiceGroupConfiguration.ServiceConfiguration] =
            (tracing.service.map { [.init(service: $0)] } ?? []) + [.init(service: app), .init(service: HangUpNotice(logger: logger))]
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = .seconds(configuration.shutdownTimeoutSeconds)
        group.maximumCancellationDuration = .seconds(5)
        // Whatever waits in the log's buffer is written last, however the group ends.
        defer { LogLineSink.standard.flush() }
        do {
            try await ServiceGroup(configuration: group).run()
        } catch {
            // The console says its own (NamedListener); a bind failure that reaches here is the API's.
            throw ListenerBindError.from(
                error, listener: "API", address: "\(configuration.host):\(configuration.port)",
                settings: "server.port, PHOTOSD_SERVER_PORT or --port") ?? error
        }
    }
}
