import DatabaseAccess
import Logging
import ServiceLifecycle

/// Owns the database for the application's lifetime and closes it when the application shuts
/// down; the server shuts down first (services stop in reverse order), so no request is still
/// using it. For PostgreSQL this is the service the `PostgresClient` runs under: its pool runs
/// from opening (migrations and the demo seed need it before the server starts) to this close.
struct DatabaseService: Service {
    let database: any DatabaseStore
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        await database.close()
        logger.notice("database closed")
    }
}
