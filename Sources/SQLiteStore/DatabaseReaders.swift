import DatabaseAccess
import Foundation
import Synchronization

/// A few read-only connections, each on its own thread, handed out round-robin.
///
/// In WAL mode readers never block the writer nor wait for it; each `read` runs in one
/// deferred transaction so that all its queries see the same snapshot.
public final class DatabaseReaders: Sendable {
    private let workers: [WorkerThread<@Sendable (Connection) -> Void>]
    private let connections: [ReaderBox]
    private let next = Atomic<Int>(0)

    /// Opens `count` read-only connections to the (existing) database at `path`.
    public init(path: String, count: Int, options: Connection.Options = .init()) throws {
        var workers: [WorkerThread<@Sendable (Connection) -> Void>] = []
        var boxes: [ReaderBox] = []
        for index in 0..<max(1, count) {
            let box = ReaderBox(try Connection(path: path, mode: .readOnly, options: options))
            boxes.append(box)
            workers.append(WorkerThread(name: "sqlite-reader-\(index)", maxBatch: 1) { jobs in
                for job in jobs { job(box.connection) }
            })
        }
        self.workers = workers
        self.connections = boxes
    }

    /// Runs `body` on a reader connection in one read transaction and returns its result.
    @discardableResult
    public func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let index = next.wrappingAdd(1, ordering: .relaxed).newValue.magnitude % UInt(workers.count)
        return try await withCheckedThrowingContinuation { continuation in
            let refusal = workers[Int(index)].submit { connection in
                do {
                    let value = try connection.transaction(.deferred) { try body(connection) }
                    continuation.resume(returning: value)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            if refusal != nil { continuation.resume(throwing: DatabaseClosedError()) }
        }
    }

    /// Stops the threads and closes the connections.
    public func close() {
        for worker in workers { worker.stop() }
        for box in connections { box.connection.close() }
    }
}

/// `@unchecked Sendable`: the connection is used only on its worker's thread, and closed after
/// that thread has stopped.
private final class ReaderBox: @unchecked Sendable {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
}
