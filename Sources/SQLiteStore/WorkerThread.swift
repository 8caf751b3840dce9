import Foundation

/// A dedicated OS thread that runs jobs in order, one batch at a time.
///
/// SQLite calls block; running them here keeps them off Swift's cooperative pool and off the
/// NIO event loops. The thread hands the handler every job queued since the last batch (up to
/// `maxBatch`), which is what lets the writer commit many requests at once.
final class WorkerThread<Job>: @unchecked Sendable {
    // @unchecked Sendable: `queue` and `stopping` are only touched with `condition` locked;
    // `handler` runs only on the worker thread.
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private let maxBatch: Int
    private let handler: ([Job]) -> Void

    init(name: String, maxBatch: Int, handler: @escaping ([Job]) -> Void) {
        self.maxBatch = max(1, maxBatch)
        self.handler = handler
        let thread = Thread { [self] in
            // Named for `top -H`, `perf` and /proc/PID/task: Foundation's `Thread.name` does
            // not reach the OS thread on Linux, and glibc's pthread_setname_np is not visible
            // to Swift. The kernel keeps at most 15 bytes.
            #if os(Linux)
            try? Data(name.utf8.prefix(15)).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            #endif
            self.run()
        }
        thread.name = name
        thread.start()
    }

    /// Queues a job. Returns false (and runs nothing) once the thread is stopping.
    @discardableResult
    func submit(_ job: Job) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        queue.append(job)
        condition.signal()
        return true
    }

    /// Runs what is queued, then stops the thread and waits for it to end.
    func stop() {
        condition.lock()
        let alreadyStopping = stopping
        stopping = true
        condition.signal()
        condition.unlock()
        if !alreadyStopping { finished.wait() }
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                break
            }
            let count = min(queue.count, maxBatch)
            let batch = Array(queue.prefix(count))
            queue.removeFirst(count)
            condition.unlock()
            handler(batch)
        }
        finished.signal()
    }
}
