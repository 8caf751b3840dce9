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
/// SQLite answers each at once, so a closure runs from start to end on that thread. There is one
/// queue: a request is a call on that actor, so it waits among the thread's jobs (`ThreadExecutor`)
/// and joins the next batch when the thread reaches it. What bounds the queue is `Admission`, a
/// count taken before the request leaves its caller, so an overloaded writer refuses at once.
public final class DatabaseWriter: Sendable {
    private let admission: Admission
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
        let admission = Admission(capacity: max(1, maxQueuedRequests))
        let executor = ThreadExecutor(name: threadName)
        self.connection = connection
        self.admission = admission
        self.executor = executor
        self.maxBatchSize = max(1, maxBatchSize)
        self.maxQueuedRequests = maxQueuedRequests
        self.statistics = statistics
        let committer = Committer(executor: executor, connection: connection, statistics: statistics, admission: admission)
        self.committer = committer
        let batchSize = self.maxBatchSize
        let loopEnded = self.loopEnded
        // The loop holds the committer, never `self`, so a writer that is dropped without
        // `close()` still ends its loop and its thread (`deinit`). It starts on the writer's
        // thread and signals its end from there: the blocking `close()` may be called on a
        // thread of the cooperative pool, so nothing it waits for may need one.
        Task(executorPreference: executor) {
            await committer.run(batchSize: batchSize, ended: loopEnded)
        }
    }

    deinit {
        stopTakingRequests()
    }

    /// Runs `body` inside the writer's transaction and returns its result once it is committed.
    ///
    /// `body` may run in the same transaction as other requests; if it throws, only its own
    /// writes are rolled back and the error is rethrown here.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        switch admission.admit() {
        case .admitted: return try await committer.submit(body)
        case .stopped: throw DatabaseClosedError()
        case .full: throw DatabaseOverloadedError(queued: maxQueuedRequests)
        }
    }

    /// Finishes the queued requests, checkpoints the WAL and closes the connection, without
    /// holding a thread of the cooperative pool: the wait is a suspension, and the checkpoint
    /// runs on the writer's own thread, which then ends by itself. What `DatabaseStore.close()`
    /// runs (photosd's shutdown).
    public func close() async {
        guard stopTakingRequests() else { return }
        await loopEnded.wait()
        await committer.closeConnection()
        executor.stop(waiting: false)
    }

    /// The same, blocking the caller until it is done: for callers that cannot await (a test's
    /// `defer`, a tool's last line).
    public func close() {
        guard stopTakingRequests() else { return }
        loopEnded.blockingWait()
        executor.stop(waiting: true)
        // The loop and the thread have ended: nothing else uses the connection now.
        connection.close()
    }

    /// Refuses new requests and tells the loop to end once those admitted are done; false if
    /// that was done already. Synchronous (`deinit` and the blocking `close()` call it): the
    /// loop is told by a job on its own thread.
    @discardableResult
    private func stopTakingRequests() -> Bool {
        guard admission.stop() else { return false }
        Task(executorPreference: executor) { [committer] in await committer.wake() }
        return true
    }

    /// Requests waiting for the writer now (not those in the transaction being written).
    public var queuedRequests: Int { admission.waiting }

    /// Counts of what the writer has done so far (for metrics and benchmarks).
    public var stats: WriterStatistics.Snapshot { statistics.snapshot() }
}

/// Runs the writer's transactions, one batch after another, on the writer's thread.
private actor Committer {
    private let executor: ThreadExecutor
    private let box: ConnectionBox
    private let statistics: WriterStatistics
    private let admission: Admission
    /// Requests that reached the writer's thread, for the next batch.
    private var arrived: [any WriteJob] = []
    /// The loop, while it waits for a request (or for the end).
    private var idle: CheckedContinuation<Void, Never>?

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(executor: ThreadExecutor, connection: ConnectionBox, statistics: WriterStatistics, admission: Admission) {
        self.executor = executor
        self.box = connection
        self.statistics = statistics
        self.admission = admission
    }

    /// Adds an admitted request to the next batch and waits until it is committed (or failed).
    func submit<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            arrived.append(TypedWriteJob(body: body, continuation: continuation))
            wake()
        }
    }

    /// Resumes the loop if it is waiting (a request arrived, or the writer is closing).
    func wake() {
        guard let idle else { return }
        self.idle = nil
        idle.resume()
    }

    /// Commits batches until the writer is closing and every admitted request is done, then
    /// signals `ended`.
    func run(batchSize: Int, ended: LoopEnd) async {
        while true {
            if arrived.isEmpty {
                // Admitted requests that have not reached this thread yet keep the loop going.
                if admission.isDrained { break }
                await withCheckedContinuation { idle = $0 }
                continue
            }
            let count = min(arrived.count, batchSize)
            let jobs = Array(arrived.prefix(count))
            arrived.removeFirst(count)
            admission.started(count)
            await commit(jobs)
            // Lets the requests that reached the thread during that transaction (their jobs are
            // queued ahead of this one) join the next batch.
            await Task.yield()
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
            try connection.execute("COMMIT")
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

/// How many requests may still wait for the writer, decided before a request leaves its caller.
private final class Admission: Sendable {
    enum Decision { case admitted, stopped, full }

    private struct State {
        /// Admitted and not yet taken into a transaction (on their way to the writer's thread, or
        /// waiting there).
        var waiting = 0
        var stopping = false
    }
    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    var waiting: Int { state.withLock { $0.waiting } }

    func admit() -> Decision {
        state.withLock { state in
            guard !state.stopping else { return .stopped }
            guard state.waiting < capacity else { return .full }
            state.waiting += 1
            return .admitted
        }
    }

    /// `count` requests were taken into a transaction.
    func started(_ count: Int) {
        state.withLock { $0.waiting -= count }
    }

    /// Refuses requests from now on; false if it did already.
    func stop() -> Bool {
        state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
    }

    /// Stopped, and every admitted request has been taken into a transaction.
    var isDrained: Bool { state.withLock { $0.stopping && $0.waiting == 0 } }
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
