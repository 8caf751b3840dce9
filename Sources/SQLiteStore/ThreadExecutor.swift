import Dispatch

/// A serial executor whose jobs run on one dedicated OS thread.
///
/// SQLite's calls block. The writer and each reader are actors whose executor is one of these:
/// their methods, the transaction closures they call and every statement those await (the
/// package builds with `NonisolatedNonsendingByDefault`, so an `async` function runs on its
/// caller's executor) run on this thread — off Swift's cooperative pool and off NIO's event
/// loops, with no hop per statement. It is a task executor too, so that a task can start on the
/// thread (the writer's loop) without first taking a thread of the cooperative pool.
final class ThreadExecutor: SerialExecutor, TaskExecutor {
    private let worker: WorkerThread<UnownedJob>
    /// Runs jobs that arrive after `stop()` (an actor resumed late), one at a time, so that
    /// they still end — with "closed" from the store — instead of waiting for ever.
    private let afterStop: DispatchQueue

    /// Starts the thread, named `name` for the operating system (at most 15 bytes are kept).
    init(name: String) {
        let reference = ExecutorReference()
        worker = WorkerThread(name: name, maxBatch: 64) { jobs in
            guard let (serial, task) = reference.executors else { return }
            for job in jobs { job.runSynchronously(isolatedTo: serial, taskExecutor: task) }
        }
        afterStop = DispatchQueue(label: name + ".after-stop")
        reference.executors = (asUnownedSerialExecutor(), asUnownedTaskExecutor())
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        guard !worker.submit(job) else { return }
        // The thread has stopped: nothing else runs this executor's jobs now, so a serial queue
        // keeps them one at a time.
        let (serial, task) = (asUnownedSerialExecutor(), asUnownedTaskExecutor())
        afterStop.async { job.runSynchronously(isolatedTo: serial, taskExecutor: task) }
    }

    /// Runs the jobs already queued, then ends the thread; with `waiting`, blocks until it has.
    func stop(waiting: Bool = true) {
        worker.stop(waiting: waiting)
    }
}

/// The executor as its own thread's handler sees it: set once, right after the executor is made
/// (the handler cannot capture an object that is not yet initialised). `@unchecked Sendable`:
/// written once before any job can be submitted, read only afterwards.
private final class ExecutorReference: @unchecked Sendable {
    var executors: (UnownedSerialExecutor, UnownedTaskExecutor)?
}
