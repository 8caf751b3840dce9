import DatabaseAccess
import Foundation
import Synchronization

/// A few read-only connections, each on its own thread, handed out round-robin.
///
/// In WAL mode readers never block the writer nor wait for it; each `read` runs in one
/// deferred transaction so that all its queries see the same snapshot.
public final class DatabaseReaders: Sendable {
    private let readers: [Reader]
    private let next = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    /// Opens `count` read-only connections to the (existing) database at `path`.
    public init(path: String, count: Int, options: Connection.Options = .init()) throws {
        readers = try (0..<max(1, count)).map { index in
            Reader(
                connection: try Connection(path: path, mode: .readOnly, options: options),
                executor: ThreadExecutor(name: "sqlite-reader-\(index)"))
        }
    }

    /// Runs `body` on a reader connection in one read transaction and returns its result.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Connection) async throws -> T) async throws -> T {
        guard !closed.load(ordering: .relaxed) else { throw DatabaseClosedError() }
        let index = next.wrappingAdd(1, ordering: .relaxed).newValue.magnitude % UInt(readers.count)
        return try await readers[Int(index)].read(body)
    }

    /// Closes the connections once the reads running on them end, then lets the threads end,
    /// without holding a thread of the cooperative pool (each close runs on its reader's thread).
    public func close() async {
        guard closed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        for reader in readers { await reader.closeConnection() }
    }

    /// The same, blocking the caller until the threads have ended.
    public func close() {
        guard closed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        for reader in readers { reader.close() }
    }
}

/// One read-only connection, used by one read at a time, on its own thread.
private actor Reader {
    private let executor: ThreadExecutor
    /// `nonisolated(unsafe)`: used only by this actor's reads (on its thread), and by `close`
    /// after that thread has ended.
    private nonisolated(unsafe) let connection: Connection
    /// True while a read's transaction is open: a closure that suspends (it awaited something
    /// besides this connection) lets the actor take the next call, which must wait its turn.
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(connection: Connection, executor: ThreadExecutor) {
        self.connection = connection
        self.executor = executor
    }

    func read<T: Sendable>(_ body: @Sendable (Connection) async throws -> T) async throws -> T {
        while busy { await withCheckedContinuation { waiting.append($0) } }
        busy = true
        defer {
            busy = false
            if !waiting.isEmpty { waiting.removeFirst().resume() }
        }
        return try await connection.transaction(.deferred) { try await body(connection) }
    }

    /// Closes the connection once the read running on it (if any) has ended, on this reader's
    /// thread, then lets the thread end by itself.
    func closeConnection() async {
        while busy { await withCheckedContinuation { waiting.append($0) } }
        busy = true  // for good: nothing reads after this
        connection.close()
        executor.stop(waiting: false)
    }

    /// Lets the thread finish what is queued, ends it, then closes the connection.
    nonisolated func close() {
        executor.stop()
        connection.close()
    }
}
