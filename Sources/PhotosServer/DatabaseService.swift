import Logging
import SQLiteStore
import ServiceLifecycle

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
