import NIOCore

/// A long wait that ends with its client's connection.
enum ClientGone {
    /// Runs `body`, cancelled as soon as `closed` completes (the connection went away): a long
    /// poll ends with its client instead of holding its wait, and its place among the address's
    /// polls, to the end. What `body` returns or throws once cancelled is answered to no one.
    ///
    /// (Not a task group with a child awaiting `closed`: `EventLoopFuture.get()` does not end
    /// when its task is cancelled, so the group would wait for the connection to close before
    /// the answer could be written.)
    static func unlessClosed<T: Sendable>(_ closed: EventLoopFuture<Void>, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        closed.whenComplete { _ in task.cancel() }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }
}
