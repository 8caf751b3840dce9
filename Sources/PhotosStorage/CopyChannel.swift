import DatabaseAccess
import PhotosCore
import PhotosModel
import Synchronization

/// Hands pages of rows from the transaction reading the source to the transaction writing the
/// target (`DatabaseCopy`), holding at most `capacity` messages: the reader waits while the
/// writer is behind, so memory stays at a few pages. Either side may `fail` it; the other then
/// stops at its next `send` or `receive` with that error.
///
/// A side that waits suspends (no thread is held): on PostgreSQL both transactions run as tasks
/// of the cooperative pool, where blocking a thread could starve the other side.
final class CopyChannel: Sendable {
    /// What the source sends: a table's columns and row count, then its rows, page by page.
    enum Message: Sendable {
        case table(String, columns: [String], total: Int)
        case rows([Row])
        case finished
    }

    private struct State {
        var messages: [Message] = []
        var failure: (any Error)?
        var sending = false
        var receiving = false
        /// The side waiting now, if any (the sender for room, the receiver for a message).
        var waiting: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Claims the sending side; a second claim (a store running its transaction again) throws.
    func startSending() throws { try claim(\.sending) }

    /// Claims the receiving side; a second claim (a store running its transaction again) throws.
    func startReceiving() throws { try claim(\.receiving) }

    private func claim(_ side: WritableKeyPath<State, Bool>) throws {
        try state.withLock { state in
            if let failure = state.failure { throw failure }
            guard !state[keyPath: side] else {
                throw PhotosError(.unavailable, "the copy's transaction was interrupted and restarted; nothing was committed, run the copy again")
            }
            state[keyPath: side] = true
        }
    }

    /// Queues `message`, waiting while the queue is full.
    func send(_ message: Message) async throws {
        try await waitUntil { $0.messages.count < self.capacity }
        let other = try state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let failure = state.failure { throw failure }
            state.messages.append(message)
            defer { state.waiting = nil }
            return state.waiting
        }
        other?.resume()
    }

    /// The next message, waiting while there is none.
    func receive() async throws -> Message {
        try await waitUntil { !$0.messages.isEmpty }
        let (message, other) = try state.withLock { state -> (Message, CheckedContinuation<Void, Never>?) in
            if let failure = state.failure { throw failure }
            let message = state.messages.removeFirst()
            defer { state.waiting = nil }
            return (message, state.waiting)
        }
        other?.resume()
        return message
    }

    /// Stops both sides with `error` (the first failure wins) and drops what is queued.
    func fail(_ error: any Error) {
        let waiting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.failure == nil { state.failure = error }
            state.messages.removeAll()
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume()
    }

    /// Returns once `ready` holds or the channel failed. One side waits at a time: the queue
    /// cannot be full and empty at once, so the other side is never waiting too.
    private func waitUntil(_ ready: @escaping @Sendable (State) -> Bool) async throws {
        while true {
            let done = state.withLock { $0.failure != nil || ready($0) }
            if done { return }
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.failure != nil || ready(state) { return true }
                    state.waiting = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }
}
