import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// Server-sent events (`text/event-stream`) for the console's live pages: the producer polls
/// the database about once a second and sends what is new. A stream ends after a minute (the
/// browser's `EventSource` reconnects by itself, resuming from the last event id), when the
/// browser goes away, and when photosd shuts down, so it never holds up a graceful stop.
enum EventStream {
    static let pollInterval = Duration.seconds(1)
    static let longest = Duration.seconds(60)

    static func response(_ produce: @escaping @Sendable (inout EventStreamWriter) async throws -> Void) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                var stream = EventStreamWriter(writer: writer)
                try await stream.writer.write(ByteBuffer(string: "retry: 2000\n\n"))
                do {
                    try await produce(&stream)
                } catch is CancellationError {
                    // The stream's end, not an error.
                }
                try await stream.writer.finish(nil)
            })
    }
}

/// What a producer writes events with.
///
/// Hummingbird's `ResponseBodyWriter` runs off any actor (`@concurrent`), and so do the methods
/// that write with it. `@unchecked Sendable`: a writer belongs to the one response body that
/// made it, whose task alone calls it, one call at a time (every method is `mutating`).
struct EventStreamWriter: @unchecked Sendable {
    var writer: any ResponseBodyWriter
    private let started = ContinuousClock.now
    private var polled = false

    init(writer: any ResponseBodyWriter) {
        self.writer = writer
    }

    /// One event: `event: name`, `id: id`, `data: json`.
    @concurrent mutating func send(event: String, id: String, json: [String: Any]) async throws {
        let data = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        try await writer.write(ByteBuffer(string: "event: \(event)\nid: \(id)\ndata: \(String(decoding: data, as: UTF8.self))\n\n"))
    }

    /// True at once the first time, then after each poll interval; false when the stream should
    /// end. Sends a comment line each time, so a browser that went away is noticed (the write fails).
    @concurrent mutating func waitForNextPoll() async throws -> Bool {
        if polled {
            try await Task.sleep(for: EventStream.pollInterval)
            try await writer.write(ByteBuffer(string: ": poll\n\n"))
        }
        polled = true
        return !Task.isCancelled && !Task.isShuttingDownGracefully && ContinuousClock.now - started < EventStream.longest
    }
}
