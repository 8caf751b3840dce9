import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosStorage
import PostgresStore
import Sessions
import SQLiteStore
import Synchronization
import Testing

/// The stores a test runs on: SQLite always, PostgreSQL when `PHOTOSD_TEST_POSTGRES_URL` names
/// a server (`scripts/test` starts one). Suites that must hold on both take these as arguments.
public enum TestStore: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite, postgres
    /// No store: the navigation core over a world in memory (the navigation tests' harness).
    case memory

    /// The stores available in this run.
    public static var all: [TestStore] { PostgresTestDatabase.available ? [.sqlite, .postgres] : [.sqlite] }

    /// The pure core in memory, then every store: where a navigation test runs.
    public static var navigation: [TestStore] { [.memory] + all }

    public var testDescription: String { rawValue }
}

/// A migrated database — a SQLite file in a temporary directory, or a fresh database on the
/// test PostgreSQL server — with services using bcrypt's minimum cost.
public struct TestDatabase: Sendable {
    public let directory: TemporaryDirectory
    public let database: any DatabaseStore
    /// The PostgreSQL database, dropped at `close` (nil on SQLite).
    public let postgres: PostgresTestDatabase?
    public var path: String { directory.file("photos.db") }

    /// Creates and migrates a SQLite database.
    public init(durability: Connection.Synchronous = .full) throws {
        directory = try TemporaryDirectory()
        database = try PhotosDatabase.open(path: directory.file("photos.db"), durability: durability, readerCount: 2)
        postgres = nil
    }

    private init(directory: TemporaryDirectory, database: any DatabaseStore, postgres: PostgresTestDatabase?) {
        self.directory = directory
        self.database = database
        self.postgres = postgres
    }

    /// Creates and migrates a database on `store`.
    public static func make(_ store: TestStore, durability: Connection.Synchronous = .full) async throws -> TestDatabase {
        guard store == .postgres else { return try TestDatabase(durability: durability) }
        let directory = try TemporaryDirectory()
        let postgres = try await PostgresTestDatabase.create()
        var configuration = PhotosConfiguration()
        configuration.databasePath = postgres.url()
        configuration.durability = durability
        configuration.maxConnections = 8
        let database = try await PhotosDatabase.open(configuration, logger: PostgresTestDatabase.logger)
        return TestDatabase(directory: directory, database: database, postgres: postgres)
    }

    /// Everything the store keeps, as bytes to search for secrets: the SQLite file and its WAL
    /// (call after closing the database), or a `pg_dump` of the PostgreSQL database followed by
    /// the server's log.
    public func storedBytes() async throws -> Data {
        var bytes = Data()
        if let postgres {
            await bytes.append(try postgres.dump())
            bytes.append(PostgresTestDatabase.serverLog() ?? Data())
        } else {
            for suffix in ["", "-wal"] { bytes.append(FileManager.default.contents(atPath: path + suffix) ?? Data()) }
        }
        return bytes
    }

    /// The configuration of a server or tool over this database.
    public func configuration() -> PhotosConfiguration {
        var configuration = PhotosConfiguration()
        configuration.databasePath = postgres?.url() ?? path
        configuration.maxConnections = 8
        return configuration
    }

    /// Holds back every write to session `sessionID` until the hold is released: SQLite's
    /// writer is held (every write waits); on PostgreSQL the session's row is locked, as an
    /// action's transaction locks it first. Returns once the hold is taken.
    public func holdWrites(to sessionID: String) async throws -> WriteHold {
        let gate = DispatchSemaphore(value: 0)
        let held = HeldFlag()
        let isPostgres = postgres != nil
        let task = Task { [database] in
            try await database.write { connection in
                if isPostgres { try await connection.execute("SELECT id FROM sessions WHERE id = \(sessionID) FOR UPDATE") }
                held.value.store(true, ordering: .releasing)
                // Blocks the writer's own thread (SQLite) or a transaction thread (PostgreSQL),
                // never one of Swift's cooperative threads.
                gate.wait()
            }
        }
        let limit = ContinuousClock.now + .seconds(30)
        while !held.value.load(ordering: .acquiring) {
            guard ContinuousClock.now < limit else {
                gate.signal()
                throw HoldError()
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return WriteHold(gate: gate, task: task)
    }

    /// Writes waiting behind a hold (`holdingWrites`) now: SQLite's writer queue, or on
    /// PostgreSQL the backends of this database waiting for a lock.
    public func blockedWrites() async throws -> Int {
        if let sqlite = database as? SQLiteDatabase { return sqlite.writer.queuedRequests }
        // At the server (a row lock), or in photosd before it (behind a write of the same session).
        let waiting: SQL = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        let queued = (database as? PostgresStorage)?.waitingWrites ?? 0
        return try await database.read { try await $0.queryOne(waiting)?.int(0) ?? 0 } + queued
    }

    /// Waits until at least `count` writes wait behind a hold (at most 30 s, for a busy machine);
    /// true if they did. Ordering a race by this, not by sleeping, keeps a test deterministic.
    public func waitForBlockedWrites(_ count: Int) async throws -> Bool {
        let limit = ContinuousClock.now + .seconds(30)
        while try await blockedWrites() < count {
            guard ContinuousClock.now < limit else { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// The auth service, bcrypt cost 4.
    public func auth(tokenLifetimeSeconds: Int = 3_600, now: @escaping @Sendable () -> Date = Date.init) -> AuthService {
        AuthService(database: database, bcryptCost: 4, tokenLifetimeSeconds: tokenLifetimeSeconds, now: now)
    }

    /// The session coordinator over `auth`, with a server secret in the test's directory.
    /// The session coordinator over this database. It reads the experiments at every purchase
    /// flow's start unless `experimentsMaxAge` says otherwise (photosd: once a second).
    public func sessions(auth: AuthService, idempotencyRetentionSeconds: Int = 86_400, idleExpirySeconds: Int = 0, experimentsMaxAge: Duration = .zero) throws -> SessionCoordinator {
        let secret = try ServerSecret.loadOrCreate(path: directory.file("photosd-secret.key"))
        return SessionCoordinator(
            database: database, auth: auth, idempotency: IdempotencyStore(secret: secret, retentionSeconds: idempotencyRetentionSeconds),
            idleExpirySeconds: idleExpirySeconds, experimentsMaxAge: experimentsMaxAge)
    }

    public var catalog: CatalogService { CatalogService(database: database) }
    public var purchases: PurchaseService { PurchaseService(database: database) }

    /// Closes the database and deletes the directory (and drops the PostgreSQL database, in
    /// the background: `defer` cannot wait).
    public func close() {
        if let sqlite = database as? SQLiteDatabase {
            sqlite.close()
        } else {
            let (database, postgres) = (self.database, self.postgres)
            Task {
                await database.close()
                await postgres?.drop()
            }
        }
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

/// Writes held back by `TestDatabase.holdWrites(to:)`.
public struct WriteHold: Sendable {
    let gate: DispatchSemaphore
    let task: Task<Void, any Error>

    /// Lets the held writes go and waits for the holding transaction to end.
    public func release() async throws {
        gate.signal()
        try await task.value
    }
}

private final class HeldFlag: Sendable {
    let value = Atomic(false)
}

private struct HoldError: Error, CustomStringConvertible {
    var description: String { "the write hold was not taken within 30 s" }
}
