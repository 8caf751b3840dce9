import DatabaseAccess
import CSQLite
import Foundation
import Synchronization

/// The one connection that writes, on its own thread, with group commit.
///
/// Every write is a closure that runs inside a transaction the writer owns. Requests that arrive
/// while a transaction is running are batched into the next one: `BEGIN IMMEDIATE`, one
/// `SAVEPOINT` per request (so a request that throws is rolled back alone and its neighbours still
/// commit), one `COMMIT`. A request's caller is resumed only after that COMMIT returned. When the
/// writer is idle a request starts at once; nothing waits to fill a batch.
///
/// The transactions run in `Committer`, an actor whose executor is the writer's own thread:
/// the closures are `async` (services await their statements, which PostgreSQL needs), but
/// SQLite answers each at once, so a closure runs from start to end on that thread.
public final class DatabaseWriter: Sendable {
    private let pending: PendingWrites
    private let executor: ThreadExecutor
    private let connection: ConnectionBox
    private let committer: Committer
    private let loopEnded = LoopEnd()
    /// The largest number of requests committed together.
    public let maxBatchSize: Int
    /// The most requests that may wait for the writer at once; past it `write` fails at once
    /// with `DatabaseOverloadedError` instead of queueing without bound.
    public let maxQueuedRequests: Int
    private let statistics: WriterStatistics

    /// Opens the writer connection at `path` and starts its thread, named `threadName` for the
    /// operating system (what `top -H` and photos-bench's CPU figures find; at most 15 bytes).
    public init(
        path: String, options: Connection.Options = .init(), maxBatchSize: Int = 64, maxQueuedRequests: Int = 10_000,
        threadName: String = "sqlite-writer"
    ) throws {
        let connection = ConnectionBox(try Connection(path: path, mode: .readWrite, options: options))
        let statistics = WriterStatistics()
        let pending = PendingWrites(capacity: max(1, maxQueuedRequests))
        let executor = ThreadExecutor(name: threadName)
        self.connection = connection
        self.pending = pending
        self.executor = executor
        self.maxBatchSize = max(1, maxBatchSize)
        self.maxQueuedRequests = maxQueuedRequests
        self.statistics = statistics
        // The loop holds the queue, the connection and the counters, never `self`, so a writer
        // that is dropped without `close()` still ends its loop and its thread (`deinit`). It
        // starts on the writer's thread and signals its end from there: the blocking `close()`
        // may be called on a thread of the cooperative pool, so nothing it waits for may need one.
        let committer = Committer(executor: executor, connection: connection, statistics: statistics)
        self.committer = committer
        let batchSize = self.maxBatchSize
        let loopEnded = self.loopEnded
        Task(executorPreference: executor) {
            await committer.run(pending, batchSize: batchSize, ended: loopEnded)
        }
    }

    deinit {
        pending.stop()
    }

    /// Runs `body` inside the writer's transaction and returns its result once it is committed.
    ///
    /// `body` may run in the same transaction as other requests; if it throws, only its own
    /// writes are rolled back and the error is rethrown here.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job = TypedWriteJob(body: body, continuation: continuation)
            switch pending.submit(job) {
            case nil: break
            case .stopped?: job.fail(DatabaseClosedError())
            case .full?: job.fail(DatabaseOverloadedError(queued: maxQueuedRequests))
            }
        }
    }

    /// Finishes the queued requests, checkpoints the WAL and closes the connection, without
    /// holding a thread of the cooperative pool: the wait is a suspension, and the checkpoint
    /// runs on the writer's own thread, which then ends by itself. What `DatabaseStore.close()`
    /// runs (photosd's shutdown).
    public func close() async {
        guard pending.stop() else { return }
        await loopEnded.wait()
        await committer.closeConnection()
        executor.stop(waiting: false)
    }

    /// The same, blocking the caller until it is done: for callers that cannot await (a test's
    /// `defer`, a tool's last line).
    public func close() {
        guard pending.stop() else { return }
        loopEnded.blockingWait()
        executor.stop(waiting: true)
        // The loop and the thread have ended: nothing else uses the connection now.
        connection.close()
    }

    /// Requests waiting for the writer now (not those in the transaction being written).
    public var queuedRequests: Int { pending.count }

    /// Counts of what the writer has done so far (for metrics and benchmarks).
    public var stats: WriterStatistics.Snapshot { statistics.snapshot() }
}

/// Runs the writer's transactions, one batch after another, on the writer's thread.
private actor Committer {
    private let executor: ThreadExecutor
    private let box: ConnectionBox
    private let statistics: WriterStatistics

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(executor: ThreadExecutor, connection: ConnectionBox, statistics: WriterStatistics) {
        self.executor = executor
        self.box = connection
        self.statistics = statistics
    }

    /// Commits batches until the queue is stopped and empty, then signals `ended`.
    func run(_ pending: PendingWrites, batchSize: Int, ended: LoopEnd) async {
        while let jobs = await pending.next(atMost: batchSize) {
            await commit(jobs)
        }
        ended.signal()
    }

    /// Checkpoints the WAL and closes the connection, on the writer's thread, once the loop has
    /// ended (nothing else uses the connection then).
    func closeConnection() {
        box.close()
    }

    private func commit(_ jobs: [any WriteJob]) async {
        guard !jobs.isEmpty else { return }
        let connection: Connection
        do {
            connection = try box.usableConnection(statistics: statistics)
            try connection.begin(.immediate)
        } catch {
            box.distrustAfter(error)
            for job in jobs { job.fail(error) }
            return
        }
        var succeeded: [any WriteJob] = []
        for (index, job) in jobs.enumerated() {
            do {
                try await connection.savepoint("request") { try await job.run(connection) }
                succeeded.append(job)
            } catch {
                job.fail(error)
                box.distrustAfter(error)
                if connection.isAutocommit {
                    // SQLite rolled the whole transaction back (disk full, I/O error): nothing
                    // that ran before survived, and nothing after it can run in it.
                    // They fail with the same code, so a full disk is "full" for every one of them.
                    let code = (error as? SQLiteError)?.resultCode ?? SQLITE_ABORT
                    let lost = SQLiteError(resultCode: code, message: "transaction rolled back by a failing neighbour: \(error)")
                    for job in succeeded { job.fail(lost) }
                    for job in jobs[(index + 1)...] { job.fail(lost) }
                    return
                }
            }
        }
        do {
            try connection.execute("COMMIT", arguments: [])
        } catch {
            // A failed COMMIT is never acknowledged, whatever reached the disk (after a failed
            // fsync nobody knows what did).
            let failure = connection.rolledBack(after: error)
            box.distrustAfter(failure)
            // Still in its transaction: the rollback failed too, and the connection is not reused.
            if !connection.isAutocommit { box.distrust() }
            for job in succeeded { job.fail(failure) }
            return
        }
        statistics.record(committed: succeeded.count)
        for job in succeeded { job.succeed() }
    }
}

/// The end of the writer's loop, awaited by `close()` (suspending) or waited for (blocking).
private final class LoopEnd: Sendable {
    private let state = Mutex((ended: false, waiters: [CheckedContinuation<Void, Never>]()))
    private let semaphore = DispatchSemaphore(value: 0)

    /// Called once, by the loop, as it ends.
    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ended = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
        semaphore.signal()
    }

    /// Returns once the loop has ended, suspended meanwhile.
    func wait() async {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Bool in
                if !state.ended { state.waiters.append(continuation) }
                return state.ended
            }
            if ended { continuation.resume() }
        }
    }

    /// Returns once the loop has ended, blocking the calling thread meanwhile.
    func blockingWait() {
        semaphore.wait()
        semaphore.signal()  // a later wait returns at once
    }
}

/// The requests waiting for the writer, and the loop waiting for them.
private final class PendingWrites: Sendable {
    private struct State {
        var jobs: [any WriteJob] = []
        var stopping = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { state.withLock { $0.jobs.count } }

    /// Queues a job, or says why not (and then runs nothing).
    func submit(_ job: any WriteJob) -> WorkerThread<any WriteJob>.Refusal? {
        let outcome = state.withLock { state -> (WorkerThread<any WriteJob>.Refusal?, CheckedContinuation<Void, Never>?) in
            guard !state.stopping else { return (.stopped, nil) }
            guard state.jobs.count < capacity else { return (.full, nil) }
            state.jobs.append(job)
            defer { state.waiter = nil }
            return (nil, state.waiter)
        }
        outcome.1?.resume()
        return outcome.0
    }

    /// Stops taking jobs (those queued still run); false if it was stopped already.
    @discardableResult
    func stop() -> Bool {
        let (first, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            let first = !state.stopping
            state.stopping = true
            defer { state.waiter = nil }
            return (first, state.waiter)
        }
        waiter?.resume()
        return first
    }

    /// The next jobs, at most `limit`, waiting for one if none is queued; nil once stopped and
    /// drained.
    func next(atMost limit: Int) async -> [any WriteJob]? {
        while true {
            let batch = state.withLock { state -> [any WriteJob]?? in
                if !state.jobs.isEmpty {
                    let count = min(state.jobs.count, limit)
                    defer { state.jobs.removeFirst(count) }
                    return .some(Array(state.jobs.prefix(count)))
                }
                return state.stopping ? .some(nil) : nil
            }
            if let batch { return batch }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if !state.jobs.isEmpty || state.stopping { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}

/// Counters kept by the writer.
public final class WriterStatistics: Sendable {
    /// A copy of the counters, as every group-commit store reports them.
    public typealias Snapshot = GroupCommitStatistics

    private let state = Mutex(Snapshot(commits: 0, requests: 0, largestBatch: 0, reopens: 0))

    func recordReopen() {
        state.withLock { $0.reopens += 1 }
    }

    func record(committed: Int) {
        state.withLock { value in
            value.commits += 1
            value.requests += committed
            value.largestBatch = max(value.largestBatch, committed)
        }
    }

    func snapshot() -> Snapshot { state.withLock { $0 } }
}

/// Owns the writer's connection, and replaces it after an I/O failure. `@unchecked Sendable`:
/// the connection is only used by the `Committer` (on the writer's thread), and `close` runs
/// after its loop and that thread have ended.
private final class ConnectionBox: @unchecked Sendable {
    private(set) var connection: Connection
    /// Set when an I/O failure (a failed write or fsync, a full disk) may have left the
    /// connection's idea of the file wrong: the next transaction opens a new connection first.
    private var distrusted = false

    init(_ connection: Connection) { self.connection = connection }

    /// Marks the connection for replacement when `error` is a failure of the storage itself.
    ///
    /// After a failed fsync the kernel may have dropped the pages it could not write while
    /// reporting the next fsync as a success (PostgreSQL's "fsyncgate"): nothing this connection
    /// cached or believes about the file can be trusted, so it is not reused.
    func distrustAfter(_ error: any Error) {
        if let error = error as? SQLiteError, error.isStorageFailure { distrusted = true }
    }

    /// Opens a new connection before the next transaction, whatever happened.
    func distrust() {
        distrusted = true
    }

    /// The connection to use for the next transaction: a new one if the last was distrusted.
    /// If opening fails, the next transaction tries again.
    func usableConnection(statistics: WriterStatistics) throws -> Connection {
        guard distrusted else { return connection }
        let replacement = try Connection(path: connection.path, mode: connection.mode, options: connection.options)
        connection.close()
        connection = replacement
        distrusted = false
        statistics.recordReopen()
        return replacement
    }

    func close() {
        _ = try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    }
}

protocol WriteJob: Sendable {
    func run(_ connection: Connection) async throws
    func succeed()
    func fail(_ error: any Error)
}

/// A request with its result slot. `@unchecked Sendable`: `result` is written by `run` and read
/// by `succeed`, both in the writer's `Committer`, in that order; the continuation is resumed once.
private final class TypedWriteJob<T: Sendable>: WriteJob, @unchecked Sendable {
    let body: @Sendable (Connection) async throws -> T
    let continuation: CheckedContinuation<T, any Error>
    private var result: T?

    init(body: @escaping @Sendable (Connection) async throws -> T, continuation: CheckedContinuation<T, any Error>) {
        self.body = body
        self.continuation = continuation
    }

    func run(_ connection: Connection) async throws { result = try await body(connection) }

    func succeed() {
        guard let result else { return fail(SQLiteError(resultCode: SQLITE_MISUSE, message: "write job has no result")) }
        continuation.resume(returning: result)
    }

    func fail(_ error: any Error) { continuation.resume(throwing: error) }
}
