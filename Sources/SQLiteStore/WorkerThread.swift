import DatabaseAccess
import Foundation
import Synchronization

/// A dedicated OS thread that runs jobs in order, one batch at a time.
///
/// SQLite calls block; running them here keeps them off Swift's cooperative pool and off the
/// NIO event loops. The thread hands the handler every job queued since the last batch (up to
/// `maxBatch`), which is what lets the writer commit many requests at once.
///
/// The thread holds only the queue and the handler, never this object: a worker that is
/// dropped without `stop()` still ends its thread (after the queued jobs) from `deinit`.
final class WorkerThread<Job>: Sendable {
    /// Why `submit` refused a job.
    enum Refusal: Error {
        /// `stop()` was called.
        case stopped
        /// `capacity` jobs are already waiting.
        case full
    }

    private let queue: JobQueue<Job>

    /// Starts the thread. `capacity` bounds the jobs waiting at once (not the one running).
    init(name: String, maxBatch: Int, capacity: Int = .max, handler: @escaping @Sendable ([Job]) -> Void) {
        let queue = JobQueue<Job>(maxBatch: max(1, maxBatch), capacity: max(1, capacity))
        self.queue = queue
        let thread = Thread {
            // Named for `top -H`, `perf` and /proc/PID/task: Foundation's `Thread.name` does
            // not reach the OS thread on Linux, and glibc's pthread_setname_np is not visible
            // to Swift. The kernel keeps at most 15 bytes.
            #if os(Linux)
            try? Data(name.utf8.prefix(15)).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            #endif
            queue.run(handler)
        }
        thread.name = name
        thread.start()
    }

    deinit {
        queue.stop(wait: false)
    }

    /// Queues a job, or says why not (and then runs nothing).
    func submit(_ job: Job) -> Refusal? {
        queue.submit(job)
    }

    /// Runs what is queued, then stops the thread; with `waiting`, blocks until it has ended.
    func stop(waiting: Bool = true) {
        queue.stop(wait: waiting)
    }
}

/// The jobs waiting for a worker thread, and the lock and condition around them.
private final class JobQueue<Job>: @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `stopping` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private let maxBatch: Int
    private let capacity: Int

    init(maxBatch: Int, capacity: Int) {
        self.maxBatch = maxBatch
        self.capacity = capacity
    }

    func submit(_ job: Job) -> WorkerThread<Job>.Refusal? {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return .stopped }
        guard jobs.count < capacity else { return .full }
        jobs.append(job)
        condition.signal()
        return nil
    }

    func stop(wait: Bool) {
        condition.lock()
        let alreadyStopping = stopping
        stopping = true
        condition.signal()
        condition.unlock()
        if wait && !alreadyStopping {
            finished.wait()
            finished.signal()  // a later stop(wait:) returns at once
        }
    }

    /// The thread's body: batches until stopped and drained.
    func run(_ handler: ([Job]) -> Void) {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                break
            }
            let count = min(jobs.count, maxBatch)
            let batch = Array(jobs.prefix(count))
            jobs.removeFirst(count)
            condition.unlock()
            handler(batch)
        }
        finished.signal()
    }
}
