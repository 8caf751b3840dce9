import DatabaseAccess
import Foundation
import Logging
import PostgresNIO
// The error type postgres-nio's pool throws as it is (no connection could be made for a while:
// `connectionCreationCircuitBreakerTripped`), recognised by type.
import _ConnectionPoolModule
import Synchronization

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
}

/// A PostgreSQL database as a `DatabaseStore`: a `PostgresClient` (a pool of connections).
///
/// A transaction takes a connection from the pool and sends `BEGIN`, the closure's statements
/// and `COMMIT` on it, awaiting each answer: the task suspends while the server works, and no
/// thread waits (see `DatabaseStore`).
///
/// Several instances may share the database: what must be serialized across them is serialized
/// by the database (row locks, and the advisory locks `AuditChains` and `SharedSignInLimiter`
/// take; see docs/storage.md), not in this process.
public final class PostgresStorage: DatabaseStore {
    /// Where the database is (its description leaves the password out).
    public let location: PostgresLocation
    /// The connection pool of the host in use; it runs from `open` until `close`.
    public var client: PostgresClient { pools.withLock { $0.clients[current.load(ordering: .relaxed)] } }
    /// One pool per host of the URL (one, unless it names several), as opened: the application
    /// runs each. A pool replaced after an outage (`PoolRenewal`) is run by this store instead.
    public let clients: [PostgresClient]
    /// The pool of each host in use, and the tasks of those this store runs (`open`'s with
    /// `runsPool`, and every replacement), by host.
    private let pools: Mutex<(clients: [PostgresClient], running: [Int: PoolRunTask])>
    /// Each host's pool configuration, for a replacement.
    private let configurations: [PostgresClient.Configuration]
    /// Which of `clients` is in use: the writable host, with `target_session_attrs=read-write`.
    private let current = Atomic<Int>(0)
    /// Finds the writable host again after a failure, and whether the host answers while its
    /// pool fails.
    private let follower: WritableHostFollower
    /// Whether the pool in use has failed long enough, with its host up, to be replaced: for at
    /// least a statement timeout (by then the server has cancelled any statement that held a
    /// connection, so a pool that still serves nothing is not merely busy).
    let renewal: PoolRenewal
    let logger: Logger
    private let closed = Atomic<Bool>(false)
    /// The deadlines of the operations under way (`withDeadline`).
    let deadlines = DeadlineWatch()
    /// The navigation writes of the pool, sent together while others are under way
    /// (`writeNavigation`).
    let navigationWrites: WriteBatcher<SessionStatements.WriteInput, ActionWriteOutcome>

    /// Batches of navigation writes the server refused, each write then sent alone (for tests).
    let batchesRefused = Atomic<Int>(0)

    /// Navigation writes waiting in this process for the next batch (behind a write of the same
    /// session, or while the batches allowed are under way).
    public var waitingWrites: Int { navigationWrites.waiting }

    /// How photosd uses the server.
    public struct Options: Sendable {
        /// `synchronous_commit` for photosd's connections: on (`full` durability: a commit is
        /// acknowledged once the server's WAL is on disk) or off (`normal`: the server may lose
        /// the last few hundred milliseconds of commits in a crash of its own, never consistency).
        public var synchronousCommit: Bool = true
        /// The most connections (and transactions at once) this process opens.
        public var maximumConnections: Int = 20
        /// How long opening one connection may take before it counts as failed.
        public var connectTimeout: Duration = .seconds(3)
        /// How long an operation may wait for a connection before it fails as unavailable (see
        /// `LeaseDeadline`), and how long the server lets one statement run (`statement_timeout`).
        /// Nil (the tools: a report or a verify may take long, and an operator waits): no limit.
        public var statementTimeout: Duration?
        /// How many statements of navigation writes may be under way at once before the writes
        /// that arrive wait to go together in the next (`WriteBatcher`); nil: a quarter of
        /// `maximumConnections`, leaving the rest of the pool to reads and other writes.
        public var writeBatchLeaders: Int?
        /// Creates options.
        public init(
            synchronousCommit: Bool = true, maximumConnections: Int = 20, connectTimeout: Duration = .seconds(3), statementTimeout: Duration? = nil,
            writeBatchLeaders: Int? = nil
        ) {
            self.synchronousCommit = synchronousCommit
            self.maximumConnections = maximumConnections
            self.connectTimeout = connectTimeout
            self.statementTimeout = statementTimeout
            self.writeBatchLeaders = writeBatchLeaders
        }
    }

    /// Connects to `location` (one connection first, alone, so that a server that is down or
    /// refuses the user is reported at once with its reason) and starts the pool — or, with
    /// `runsPool: false`, leaves `client` for the caller to run as a service of its
    /// `ServiceGroup` (a long-running application: `photosd`), whose shutdown then stops it.
    public static func open(_ location: PostgresLocation, options: Options = .init(), runsPool: Bool = true, logger: Logger) async throws -> PostgresStorage {
        var parameters = [("synchronous_commit", options.synchronousCommit ? "on" : "off"), ("application_name", "photosd")]
        if let timeout = options.statementTimeout { parameters.append(("statement_timeout", "\(timeout.milliseconds)ms")) }
        let endpoints = location.endpoints
        let first: Int
        do {
            first = try await WritableHostFollower.pick(endpoints, writable: location.wantsWritable, parameters: parameters, connectTimeout: options.connectTimeout, logger: logger)
        } catch {
            throw PostgresStoreError.connecting(to: location, error)
        }
        var configurations: [PostgresClient.Configuration] = []
        for endpoint in endpoints {
            var configuration = try endpoint.clientConfiguration
            configuration.options.additionalStartupParameters = parameters
            configuration.options.maximumConnections = max(1, options.maximumConnections)
            configuration.options.connectTimeout = options.connectTimeout
            configurations.append(configuration)
        }
        let clients = configurations.map { PostgresClient(configuration: $0, backgroundLogger: logger) }
        var running: [Int: PoolRunTask] = [:]
        if runsPool { for (index, client) in clients.enumerated() { running[index] = await PoolRunTask.start(client) } }
        let follower = WritableHostFollower(endpoints: endpoints, writable: location.wantsWritable, parameters: parameters, connectTimeout: options.connectTimeout, logger: logger)
        let storage = PostgresStorage(
            location: location, clients: clients, configurations: configurations, follower: follower, running: running,
            statementTimeout: options.statementTimeout,
            writeBatchLeaders: options.writeBatchLeaders ?? max(1, options.maximumConnections / 4), logger: logger)
        storage.current.store(first, ordering: .relaxed)
        return storage
    }

    private init(
        location: PostgresLocation, clients: [PostgresClient], configurations: [PostgresClient.Configuration], follower: WritableHostFollower,
        running: [Int: PoolRunTask], statementTimeout: Duration?, writeBatchLeaders: Int, logger: Logger
    ) {
        self.location = location
        self.navigationWrites = WriteBatcher(maxLeaders: writeBatchLeaders, maxBatch: 64)
        self.statementTimeout = statementTimeout
        self.clients = clients
        self.configurations = configurations
        self.pools = Mutex((clients, running))
        self.follower = follower
        self.renewal = PoolRenewal(minimumFailing: max(statementTimeout ?? .seconds(1), .seconds(1)))
        self.logger = logger
    }

    /// A warning when the server streams to standbys of which none is synchronous: a failover
    /// to one may lose acknowledged commits, and the audit log's signed rows with them (photosd
    /// then refuses to sign). Nil when it has none, or a synchronous one, or it does not say.
    public func replicationWarning() async throws -> String? {
        try await read { connection in
            guard let row = try await connection.queryOne(
                """
                SELECT (SELECT count(*) FROM pg_stat_replication) AS standbys,
                       current_setting('synchronous_standby_names') AS names,
                       current_setting('synchronous_commit') AS commits
                """) else { return nil }
            let standbys = try row.int64("standbys")
            guard standbys > 0 else { return nil }
            let names = try row.string("names").trimmingCharacters(in: .whitespaces)
            if names.isEmpty {
                return "the PostgreSQL server streams to \(standbys) standby\(standbys == 1 ? "" : "s"), none of them synchronous (synchronous_standby_names is empty): "
                    + "a failover may lose acknowledged actions and signed audit rows, and photosd then refuses to sign the log (docs/postgres.md, \"Replication and failover\")"
            }
            return nil
        }
    }

    /// The pool gave no connection: look for the (writable) host again, at most once a second.
    /// Another host found is used from then on; the host in use found answering while its pool
    /// still fails gets a new pool (`PoolRenewal`).
    func suspectHost() {
        renewal.failed()
        let inUse = current.load(ordering: .relaxed)
        follower.suspect(current: inUse) { [self] found in
            if found != inUse {
                current.store(found, ordering: .relaxed)
            } else if renewal.shouldRenew() {
                Task { await renewPool(found) }
            }
        }
    }

    /// Replaces host `index`'s pool by a new one, run by this store; the old one is stopped
    /// when this store ran it (the application's `ServiceGroup` stops its own, left idle, at
    /// shutdown). Requests still waiting on the old pool fail at their deadline, as they would
    /// have.
    private func renewPool(_ index: Int) async {
        guard !isClosed else { return }
        let client = PostgresClient(configuration: configurations[index], backgroundLogger: logger)
        let task = await PoolRunTask.start(client)
        let replaced = pools.withLock { pools -> PoolRunTask?? in
            guard !closed.load(ordering: .relaxed) else { return .none }
            let old = pools.running[index]
            pools.clients[index] = client
            pools.running[index] = task
            return .some(old)
        }
        guard let replaced else {
            await task.stop(logger: logger)  // closed meanwhile
            return
        }
        let endpoint = location.endpoints[index]
        logger.notice("PostgreSQL at \(endpoint.host ?? ""):\(endpoint.port) answers again while its connection pool still waits to reconnect: a new pool replaces it")
        await replaced?.stop(logger: logger)
    }

    /// How long an operation waits for the server (`Options.statementTimeout`; nil: no limit).
    let statementTimeout: Duration?

    /// True once `close` began.
    var isClosed: Bool { closed.load(ordering: .relaxed) }

    /// PostgreSQL's dialect.
    public var dialect: SQLDialect { .postgres }

    /// Every pooled connection, and every instance, writes at the same time as the others.
    public var writersRunConcurrently: Bool { true }

    /// The URL without the password.
    public var description: String { location.description }

    /// Runs `body` in a `READ COMMITTED` transaction on a pooled connection. A transaction the
    /// server ends for a deadlock or a serialization failure is run again (at most 4 times in
    /// all): nothing of it was kept.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await writeTransaction { try await body($0) }
    }

    /// `write` on the transaction's own connection type (for the prepared statements).
    func writeTransaction<T: Sendable>(_ body: @escaping @Sendable (PostgresTransactionConnection) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await transaction("BEGIN", body)
            } catch let error as PostgresStoreError where error.isRetryableTransaction && attempt < 4 {
                attempt += 1
                logger.debug("transaction retried", metadata: ["sqlstate": "\(error.sqlState ?? "")", "attempt": "\(attempt)"])
            }
        }
    }

    /// Runs `body` in a `REPEATABLE READ READ ONLY` transaction: one snapshot for all its queries.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (any DatabaseConnection) async throws -> T) async throws -> T {
        try await transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try await body($0) }
    }

    private func transaction<T: Sendable>(_ begin: String, _ body: @escaping @Sendable (PostgresTransactionConnection) async throws -> T) async throws -> T {
        guard !closed.load(ordering: .relaxed) else { throw DatabaseClosedError() }
        let logger = self.logger
        do {
            let result = try await withDeadline { deadline in try await self.client.withConnection { connection in
                guard deadline.claim() else { throw CancellationError() }
                deadline.onAbandon { let closing: EventLoopFuture<Void> = connection.close(); _ = closing }
                defer { deadline.release() }
                let transaction = PostgresTransactionConnection(connection, logger: logger)
                try await transaction.run(begin, [])
                let result: T
                do {
                    result = try await body(transaction)
                    try await transaction.run("COMMIT", [])
                } catch {
                    // After a failed statement the server has aborted the transaction; after
                    // an error of the closure's own it is still open. Either way: roll back. A
                    // rollback that fails leaves the connection in an unknown state: it is
                    // logged and closed, so that the pool never lends it again.
                    do {
                        try await transaction.run("ROLLBACK", [])
                    } catch let rollback {
                        logger.warning("rollback failed; the connection is closed", metadata: [
                            "error": "\(String(describing: rollback))", "after": "\(String(describing: error))",
                        ])
                        let closing: EventLoopFuture<Void> = connection.close()
                        _ = closing
                    }
                    throw error
                }
                return result
            } }
            renewal.succeeded()
            return result
        } catch let error where error is PSQLError || error is ConnectionPoolError {
            // From the pool itself (no connection to be had), not from a statement.
            if closed.load(ordering: .relaxed) { throw DatabaseClosedError() }
            suspectHost()
            throw PostgresStoreError.connecting(to: location, error)
        }
    }

    /// Runs `body` under a `LeaseDeadline` of `statementTimeout` (none when it is nil): a server
    /// that does not give a connection in time is "unavailable" (transient: `503` with
    /// `Retry-After`), and nothing is sent after that answer.
    func withDeadline<T: Sendable>(_ body: @escaping @Sendable (LeaseDeadline) async throws -> T) async throws -> T {
        guard let timeout = statementTimeout else { return try await body(LeaseDeadline()) }
        let location = location
        // What an earlier operation of the same request spent comes off this one's wait for a
        // connection (never below a quarter second, so a healthy pool is still claimed).
        let spent = RequestDeadline.startedAt.map { ContinuousClock.now - $0 } ?? .zero
        let wait = max(timeout - spent, .milliseconds(250))
        return try await LeaseDeadline.run(timeout: timeout, connectionWait: wait, watch: deadlines, timedOut: { [self] in
            // No connection in time: the host may be gone (a failover) as well as slow.
            suspectHost()
            return PostgresStoreError.noAnswer("no connection within \(timeout.milliseconds / 1_000) s (is the server running?)", doing: "connecting to \(location)")
        }, body)
    }

    /// Refuses new transactions, then closes the connections (a transaction still running
    /// fails with them).
    public func close() async {
        guard closed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let running = pools.withLock { $0.running.values }
        for task in running { await task.stop(logger: logger) }
        deadlines.stop()
    }
}
