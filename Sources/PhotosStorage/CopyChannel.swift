import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel

/// Hands pages of rows from the thread reading the source to the thread writing the target
/// (`DatabaseCopy`), holding at most `capacity` messages: the reader waits while the writer is
/// behind, so memory stays at a few pages. Either side may `fail` it; the other then stops at
/// its next `send` or `receive` with that error.
///
/// Both sides block their thread while they wait. That is right here: they run on the stores'
/// own threads (SQLite's reader and writer threads, PostgreSQL's blocking pool), never on an
/// event loop or a cooperative thread.
///
/// `@unchecked Sendable`: every stored `var` is read and written only while `condition` is
/// locked, and `capacity` is a constant.
final class CopyChannel: @unchecked Sendable {
    /// What the source sends: a table's columns and row count, then its rows, page by page.
    enum Message {
        case table(String, columns: [String], total: Int)
        case rows([Row])
        case finished
    }

    private let condition = NSCondition()
    private let capacity: Int
    private var messages: [Message] = []
    private var failure: (any Error)?
    private var sending = false
    private var receiving = false

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Claims the sending side; a second claim (a store running its transaction again) throws.
    func startSending() throws { try claim(\.sending) }

    /// Claims the receiving side; a second claim (a store running its transaction again) throws.
    func startReceiving() throws { try claim(\.receiving) }

    private func claim(_ side: ReferenceWritableKeyPath<CopyChannel, Bool>) throws {
        condition.lock()
        defer { condition.unlock() }
        if let failure { throw failure }
        guard !self[keyPath: side] else {
            throw PhotosError(.unavailable, "the copy's transaction was interrupted and restarted; nothing was committed, run the copy again")
        }
        self[keyPath: side] = true
    }

    /// Queues `message`, waiting while the queue is full.
    func send(_ message: Message) throws {
        condition.lock()
        defer { condition.unlock() }
        while messages.count >= capacity, failure == nil { condition.wait() }
        if let failure { throw failure }
        messages.append(message)
        condition.broadcast()
    }

    /// The next message, waiting while there is none.
    func receive() throws -> Message {
        condition.lock()
        defer { condition.unlock() }
        while messages.isEmpty, failure == nil { condition.wait() }
        if let failure { throw failure }
        let message = messages.removeFirst()
        condition.broadcast()
        return message
    }

    /// Stops both sides with `error` (the first failure wins) and drops what is queued.
    func fail(_ error: any Error) {
        condition.lock()
        defer { condition.unlock() }
        if failure == nil { failure = error }
        messages.removeAll()
        condition.broadcast()
    }
}
