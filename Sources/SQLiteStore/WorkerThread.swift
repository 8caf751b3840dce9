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
    private let queue: JobQueue<Job>

    /// Starts the thread.
    init(name: String, maxBatch: Int, handler: @escaping @Sendable ([Job]) -> Void) {
        let queue = JobQueue<Job>(maxBatch: max(1, maxBatch))
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

    /// Queues a job; false (and the job is not run) once `stop()` was called.
    func submit(_ job: Job) -> Bool {
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

    init(maxBatch: Int) {
        self.maxBatch = maxBatch
    }

    func submit(_ job: Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        jobs.append(job)
        condition.signal()
        return true
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
