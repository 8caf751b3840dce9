import Foundation
import Navigation
import PhotosCore
import SQLiteStore
import Synchronization

/// A migrated database in a temporary directory, with services using bcrypt's minimum cost.
public struct TestDatabase: Sendable {
    public let directory: TemporaryDirectory
    public let database: SQLiteDatabase
    public var path: String { directory.file("photos.db") }

    /// Creates and migrates the database.
    public init(durability: Connection.Synchronous = .full) throws {
        directory = try TemporaryDirectory()
        database = try PhotosDatabase.open(path: directory.file("photos.db"), durability: durability, readerCount: 2)
    }

    /// The auth service, bcrypt cost 4.
    public func auth(tokenLifetimeSeconds: Int = 3_600, now: @escaping @Sendable () -> Date = Date.init) -> AuthService {
        AuthService(database: database, bcryptCost: 4, tokenLifetimeSeconds: tokenLifetimeSeconds, now: now)
    }

    /// The session coordinator over `auth`, with a server secret in the test's directory.
    public func sessions(auth: AuthService, idempotencyRetentionSeconds: Int = 86_400) throws -> SessionCoordinator {
        let secret = try ServerSecret.loadOrCreate(path: directory.file("photosd-secret.key"))
        return SessionCoordinator(database: database, auth: auth, idempotency: IdempotencyStore(secret: secret, retentionSeconds: idempotencyRetentionSeconds))
    }

    public var catalog: CatalogService { CatalogService(database: database) }
    public var purchases: PurchaseService { PurchaseService(database: database) }

    /// Closes the database and deletes the directory.
    public func close() {
        database.close()
        directory.remove()
    }
}

/// A clock the test moves by hand.
public final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    public init() {}
    public func now() -> Date { current.withLock { $0 } }
    public func advance(seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// The operator tests act as.
public let testOperator = AuditActor.operator("tester")
