import AuditTrail
import Foundation
import HTTPTypes
import Hummingbird
import PhotosListener
import ServiceLifecycle
import Synchronization

/// Server-sent events (`text/event-stream`) for the console's live pages: the producer polls
/// the database when this process commits a write to a session (`AuditCommits`; at most every
/// `shortestPoll`, so a burst is one poll) and at least once a second (what other processes
/// wrote), and sends what is new. A stream ends after a minute (the
/// browser's `EventSource` reconnects by itself, resuming from the last event id), when the
/// browser goes away, when photosd shuts down (so it never holds up a graceful stop), and at the
/// first poll after its console session ended (signed out, the operator removed, idle too long).
enum EventStream {
    static let pollInterval = Duration.seconds(1)
    static let shortestPoll = Duration.milliseconds(50)
    static let longest = Duration.seconds(60)

    /// A stream for as long as `isLive` says, run by `produce`; `ended` is called once it is over.
    static func response(
        isLive: @escaping @Sendable () async throws -> Bool, commits: AuditCommits?, ended: @escaping @Sendable () -> Void,
        _ produce: @escaping @Sendable (inout EventStreamWriter) async throws -> Void
    ) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                defer { ended() }
                var stream = EventStreamWriter(writer: writer, isLive: isLive, commits: commits)
                try await stream.writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                do {
                    try await produce(&stream)
                } catch is CancellationError {
                    // The stream's end, not an error.
                }
                try await stream.writer.finish(nil)
            })
    }

    /// Where a stream starts: `Last-Event-ID` (a browser reconnecting), else `after=`, else nil
    /// (the caller starts at the newest row, never at the beginning of history). Throws
    /// `400` for a value that is not a whole number from 0.
    static func start(_ request: Request) throws -> Int64? {
        let query = request.uri.queryParameters
        let given: String? = request.headers[HTTPField.Name("Last-Event-ID")!] ?? query.get("after").map { String($0) }
        guard let given else { return nil }
        guard let start = Int64(given), start >= 0 else {
            throw ConsoleRefusal(status: .badRequest, message: "after= takes the id of the last event seen, a whole number from 0.")
        }
        return start
    }
}

/// The live streams each operator has open, at most `perKey` at once: a stream holds a poll a
/// second on the database for a minute, so one viewer opening many would load the service for
/// everyone.
typealias LiveStreamSlots = HeldSlots<Int64>

extension HeldSlots<Int64> {
    /// Takes a slot for `operatorID`; throws `429` when they have `perKey` open.
    func takeForOperator(_ operatorID: Int64) throws {
        guard take(operatorID) else {
            throw ConsoleRefusal(status: .tooManyRequests, message: "You have \(perKey) live views open: close one first.")
        }
    }
}

/// What a producer writes events with.
///
/// Hummingbird's `ResponseBodyWriter` runs off any actor (`@concurrent`), and so do the methods
/// that write with it. `@unchecked Sendable`: a writer belongs to the one response body that
/// made it, whose task alone calls it, one call at a time (every method is `mutating`).
struct EventStreamWriter: @unchecked Sendable {
    var writer: any ResponseBodyWriter
    private let isLive: @Sendable () async throws -> Bool
    private let started = ContinuousClock.now
    private var polled = false
    /// What wakes a poll before its interval is out, and how many commits it had seen.
    private let commits: AuditCommits?
    private var seen: UInt64 = 0

    init(writer: any ResponseBodyWriter, isLive: @escaping @Sendable () async throws -> Bool, commits: AuditCommits? = nil) {
        self.writer = writer
        self.isLive = isLive
        self.commits = commits
    }

    /// One event: `event: name`, `id: id`, `data: json`.
    @concurrent mutating func send(event: String, id: String, json: [String: Any]) async throws {
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        try await writer.write(ByteBuffer(string: "event: \(event)\nid: \(id)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"))
    }

    /// True at once the first time, then at this process's next commit (no sooner than
    /// `shortestPoll` after the last poll) or after the poll interval, whichever is first; false
    /// when the stream should end (its minute is over, photosd stops, its console session
    /// ended). Sends a comment line each time, so a browser that went away is noticed (the
    /// write fails).
    @concurrent mutating func waitForNextPoll() async throws -> Bool {
        if polled {
            if let commits {
                try await Task.sleep(for: EventStream.shortestPoll)
                let seen = self.seen
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { try? await Task.sleep(for: EventStream.pollInterval - EventStream.shortestPoll) }
                    group.addTask { await commits.waitForCommit(after: seen) }
                    await group.next()
                    group.cancelAll()
                }
                try Task.checkCancellation()
            } else {
                try await Task.sleep(for: EventStream.pollInterval)
            }
            try await writer.write(ByteBuffer(string: ": poll\n\n"))
        }
        // Before the caller reads: a commit during its read wakes the next wait at once.
        seen = commits?.published ?? 0
        polled = true
        guard !Task.isCancelled, !Task.isShuttingDownGracefully, ContinuousClock.now - started < EventStream.longest else { return false }
        return try await isLive()
    }
}
