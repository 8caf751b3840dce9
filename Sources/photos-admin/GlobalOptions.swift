import ArgumentParser
import DatabaseAccess
import Foundation
import Synchronization
import Logging
import Navigation
import PhotosCore
import PhotosModel
import PhotosStorage
import Sessions
import SQLiteStore

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The database: a SQLite file or a postgres:// URL (default: $PHOTOS_DB, else database.path from the config file).")
    var db: String?

    @Option(name: .long, help: "The JSON config file (default: $PHOTOSD_CONFIG, else config/photosd.json if present, else /etc/photosd/photosd.json if present).")
    var config: String?

    /// Set once the configuration's warnings were printed (a command may load it twice).
    static let warned = Atomic<Bool>(false)

    /// The configuration, with `--db` / `PHOTOS_DB` applied.
    func configuration() async throws -> PhotosConfiguration {
        var configuration = try await PhotosConfiguration.load(filePath: config, fallbacks: [PhotosConfiguration.systemFilePath])
        if Self.warned.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            for warning in configuration.warnings { Output.note("photos-admin: warning: \(warning)") }
            // Said, so that no one mistakes which service's database a command ran on.
            if config == nil, ProcessInfo.processInfo.environment["PHOTOSD_CONFIG"] == nil,
               configuration.filePath == PhotosConfiguration.systemFilePath {
                Output.note("photos-admin: using \(PhotosConfiguration.systemFilePath) (no --config, $PHOTOSD_CONFIG or config/photosd.json here)")
            }
        }
        if let db = db ?? ProcessInfo.processInfo.environment["PHOTOS_DB"] {
            guard !db.isEmpty else { throw ValidationError("--db must not be empty") }
            configuration.databasePath = db
        }
        return configuration
    }

    /// Opens the database, which must exist (only `migrate` creates one), applying pending
    /// migrations unless `migrate` is false, and hands `body` the services.
    func withServices<T>(migrate: Bool = true, _ body: (AdminContext) async throws -> T) async throws -> T {
        let configuration = try await configuration()
        let database = try await PhotosDatabase.open(configuration, readerCount: 1, migrate: migrate, create: .never, logger: Self.logger)
        do {
            let context = AdminContext(configuration: configuration, services: try PhotosServices(configuration: configuration, database: database))
            let result = try await body(context)
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }

    /// The tools' logger: errors only (what the operator needs is printed by the command).
    static var logger: Logger {
        var logger = Logger(label: "photos-admin")
        logger.logLevel = .error
        return logger
    }
}

/// `--format table|json` for listing commands.
struct OutputOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json
    }

    @Option(name: .long, help: "Output format: table or json.")
    var format: Format = .table
}

/// What a subcommand works with.
struct AdminContext {
    let configuration: PhotosConfiguration
    let services: PhotosServices

    /// The operator, by login name: `operator:<name>` in the audit trail.
    var actor: AuditActor { .operator(Self.loginName) }

    var database: any DatabaseStore { services.database }
    var auth: AuthService { services.auth }
    var operators: OperatorService { services.operators }
    var experiments: ExperimentService { services.experiments }
    var catalog: CatalogService { services.catalog }
    var purchases: PurchaseService { services.purchases }
    var sessions: SessionCoordinator { services.sessions }

    /// The first of `$USER`, `$LOGNAME` and the account's name that is a valid operator name
    /// (`Credentials.validate(username:)`: letters, digits, `.`, `_`, `-`), else `uid<N>`. A
    /// name with a newline or a space never reaches the trail's `actor`.
    static var loginName: String {
        let environment = ProcessInfo.processInfo.environment
        let account = getpwuid(getuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
        let candidates = [environment["USER"], environment["LOGNAME"], account].compactMap { $0 }
        return candidates.first { (try? Credentials.validate(username: $0)) != nil } ?? "uid\(getuid())"
    }
}
