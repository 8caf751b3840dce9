import Foundation
import PhotosCore
import SQLiteStore

/// A migrated database in a temporary directory, with services using bcrypt's minimum cost.
struct TestDatabase {
    let directory: TemporaryDirectory
    let database: SQLiteDatabase
    var path: String { directory.file("photos.db") }

    init() throws {
        directory = try TemporaryDirectory()
        database = try PhotosDatabase.open(path: directory.file("photos.db"), readerCount: 2)
    }

    func auth(tokenLifetimeSeconds: Int = 3_600, now: @escaping @Sendable () -> Date = Date.init) -> AuthService {
        AuthService(database: database, bcryptCost: 4, tokenLifetimeSeconds: tokenLifetimeSeconds, now: now)
    }

    var catalog: CatalogService { CatalogService(database: database) }
    var purchases: PurchaseService { PurchaseService(database: database) }

    func close() {
        database.close()
        directory.remove()
    }
}

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let current = LockedValue(Date(timeIntervalSince1970: 1_800_000_000))
    func now() -> Date { current.withLock { $0 } }
    func advance(seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

let testOperator = Actor.operator("tester")
