import CSQLite
import Foundation

/// The one connection that writes, on its own thread, with group commit.
///
/// Every write is a closure that runs inside a transaction the writer owns. Requests that arrive
/// while a transaction is running are batched into the next one: `BEGIN IMMEDIATE`, one
/// `SAVEPOINT` per request (so a request that throws is rolled back alone and its neighbours still
/// commit), one `COMMIT`. A request's caller is resumed only after that COMMIT returned. When the
/// writer is idle a request starts at once; nothing waits to fill a batch.
public final class DatabaseWriter: Sendable {
    private let worker: WorkerThread<any WriteJob>
    /// The largest number of requests committed together.
    public let maxBatchSize: Int
    private let statistics: WriterStatistics

    /// Opens the writer connection at `path` and starts its thread.
    public init(path: String, options: Connection.Options = .init(), maxBatchSize: Int = 64) throws {
        let connection = try Connection(path: path, mode: .readWrite, options: options)
        let box = ConnectionBox(connection)
        let statistics = WriterStatistics()
        self.maxBatchSize = maxBatchSize
        self.statistics = statistics
        self.worker = WorkerThread(name: "sqlite-writer", maxBatch: maxBatchSize) { jobs in
            Self.runBatch(jobs, on: box, statistics: statistics)
        }
        self.closeJob = { box.close() }
    }

    private let closeJob: @Sendable () -> Void

    /// Runs `body` inside the writer's transaction and returns its result once it is committed.
    ///
    /// `body` may run in the same transaction as other requests; if it throws, only its own
    /// writes are rolled back and the error is rethrown here.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = TypedWriteJob(body: body, continuation: continuation)
            if !worker.submit(job) { job.fail(DatabaseClosedError()) }
        }
    }

    /// Finishes the queued requests, checkpoints the WAL and closes the connection.
    public func close() {
        let closeJob = self.closeJob
        worker.submit(ClosingJob(close: closeJob))
        worker.stop()
    }

    /// Counts of what the writer has done so far (for metrics and benchmarks).
    public var stats: WriterStatistics.Snapshot { statistics.snapshot() }

    private static func runBatch(_ jobs: [any WriteJob], on box: ConnectionBox, statistics: WriterStatistics) {
        let connection = box.connection
        var transactional: [any WriteJob] = []
        for job in jobs {
            if job.transactional {
                transactional.append(job)
            } else {
                // Keep order: commit what came before, then run the job alone (closing).
                commit(transactional, on: connection, statistics: statistics)
                transactional.removeAll()
                job.runAlone(connection)
            }
        }
        commit(transactional, on: connection, statistics: statistics)
    }

    private static func commit(_ jobs: [any WriteJob], on connection: Connection, statistics: WriterStatistics) {
        guard !jobs.isEmpty else { return }
        do {
            try connection.begin(.immediate)
        } catch {
            for job in jobs { job.fail(error) }
            return
        }
        var succeeded: [any WriteJob] = []
        for (index, job) in jobs.enumerated() {
            do {
                try connection.savepoint("request") { try job.run(connection) }
                succeeded.append(job)
            } catch {
                job.fail(error)
                if connection.isAutocommit {
                    // SQLite rolled the whole transaction back (disk full, I/O error): nothing
                    // that ran before survived, and nothing after it can run in it.
                    let lost = SQLiteError(resultCode: SQLITE_ABORT, message: "transaction rolled back by a failing neighbour: \(error)")
                    for job in succeeded { job.fail(lost) }
                    for job in jobs[(index + 1)...] { job.fail(lost) }
                    return
                }
            }
        }
        do {
            try connection.execute("COMMIT")
        } catch {
            connection.rollbackIfOpen()
            for job in succeeded { job.fail(error) }
            return
        }
        statistics.record(batchSize: jobs.count)
        for job in succeeded { job.succeed() }
    }
}

/// Thrown to requests that reach a closed database.
public struct DatabaseClosedError: Error, CustomStringConvertible {
    public var description: String { "the database is closed" }
}

/// Counters kept by the writer.
public final class WriterStatistics: Sendable {
    /// A copy of the counters.
    public struct Snapshot: Sendable {
        /// Transactions committed.
        public var commits: Int
        /// Requests committed (sum of batch sizes).
        public var requests: Int
        /// Largest batch so far.
        public var largestBatch: Int
    }

    private let state = LockedValue(Snapshot(commits: 0, requests: 0, largestBatch: 0))

    func record(batchSize: Int) {
        state.withLock { value in
            value.commits += 1
            value.requests += batchSize
            value.largestBatch = max(value.largestBatch, batchSize)
        }
    }

    func snapshot() -> Snapshot { state.withLock { $0 } }
}

/// Owns the writer's connection. `@unchecked Sendable`: the connection is only used on the
/// writer's thread (jobs run there), and `close` runs there too, as the last job.
private final class ConnectionBox: @unchecked Sendable {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
    func close() {
        _ = try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    }
}

protocol WriteJob: Sendable {
    var transactional: Bool { get }
    func run(_ connection: Connection) throws
    func runAlone(_ connection: Connection)
    func succeed()
    func fail(_ error: any Error)
}

/// A request with its result slot. `@unchecked Sendable`: `result` is written by `run` and read
/// by `succeed`, both on the writer thread, in that order; the continuation is resumed once.
private final class TypedWriteJob<T: Sendable>: WriteJob, @unchecked Sendable {
    let body: @Sendable (Connection) throws -> T
    let continuation: CheckedContinuation<T, any Error>
    private var result: T?

    init(body: @escaping @Sendable (Connection) throws -> T, continuation: CheckedContinuation<T, any Error>) {
        self.body = body
        self.continuation = continuation
    }

    var transactional: Bool { true }

    func run(_ connection: Connection) throws { result = try body(connection) }

    func runAlone(_ connection: Connection) {
        do { continuation.resume(returning: try body(connection)) } catch { continuation.resume(throwing: error) }
    }

    func succeed() {
        guard let result else { return fail(SQLiteError(resultCode: SQLITE_MISUSE, message: "write job has no result")) }
        continuation.resume(returning: result)
    }

    func fail(_ error: any Error) { continuation.resume(throwing: error) }
}

private struct ClosingJob: WriteJob {
    let close: @Sendable () -> Void
    var transactional: Bool { false }
    func run(_ connection: Connection) throws {}
    func runAlone(_ connection: Connection) { close() }
    func succeed() {}
    func fail(_ error: any Error) {}
}
