import Foundation
import Logging
import PhotosModel
@testable import PhotosServer
import Synchronization
import Testing

/// `log.format: text`: photosd's own handler writes swift-log's `StreamLogHandler` line byte for
/// byte, and the request line's path reads a session id into its log form however it is spelled.
@Suite("Text logs")
struct TextLogTests {
    /// The lines a handler hands to its sink.
    final class Lines: Sendable {
        let kept = Mutex<[String]>([])
        var sink: @Sendable ([UInt8], Logger.Level) -> Void { { line, _ in self.kept.withLock { $0.append(String(decoding: line, as: UTF8.self)) } } }
    }

    struct Oops: Error {}

    @Test("the same line as StreamLogHandler: label, sorted metadata (the handler's, the provider's, the event's, an error's), source, message; none, and an empty label")
    func sameAsStreamLogHandler() throws {
        let lines = Lines()
        let provider = Logger.MetadataProvider { ["trace_id": "abc"] }
        var handler = TextLogHandler(label: "photosd", metadataProvider: provider, sink: lines.sink)
        handler.metadata = ["address": "127.0.0.1:8080", "z": .stringConvertible(3)]
        var logger = Logger(label: "photosd") { _ in handler }
        logger.logLevel = .debug
        logger.info("request", metadata: ["http.status": .stringConvertible(201), "durationMs": .stringConvertible(1.758), "list": ["a", "b"]])
        logger.error("failed", error: Oops())
        var bare = TextLogHandler(label: "", sink: lines.sink)
        bare.logLevel = .debug
        Logger(label: "") { _ in bare }.notice("plain")

        // The time to the second, in local time with its offset; the rest exactly as swift-log writes it.
        let time = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4} /#
        let written = lines.kept.withLock { $0 }
        #expect(written.count == 3)
        #expect(written.allSatisfy { $0.firstMatch(of: time) != nil && $0.hasSuffix("\n") }, "\(written)")
        let rest = written.map { String($0.drop { $0 != " " }.dropFirst()) }
        #expect(rest[0] == #"info photosd: address=127.0.0.1:8080 durationMs=1.758 http.status=201 list=["a", "b"] trace_id=abc z=3 [PhotosServerTests] request"# + "\n")
        #expect(rest[1].hasPrefix("error photosd: address=127.0.0.1:8080 error.message=Oops() error.type=PhotosServerTests.TextLogTests.Oops"), "\(rest[1])")
        #expect(rest[2] == "notice: [PhotosServerTests] plain\n")

    }

    @Test("a request line's path: the session id in its log form, however the path spells it; other paths as they are", arguments: [
        "/v1/sessions/0mi5abcdef/actions", "/v1/sessions/0mi5abcdef", "/v1/sessions/0mi5abcdef/", "/v1/sessions/0mi5abcdef/receipt",
        "/V1/Sessions/0mi5abcdef/actions", "/v1/%73essions/0mi5abcdef/changes", "/v1/sessions//0mi5abcdef/x", "/v1/sessions/0mi5abcdef/a//b",
        "/v1/sessions/", "/v1/sessions", "/healthz", "/v1/photos/3", "/", "",
    ])
    func loggedPath(path: String) {
        let logged = RequestLogMiddleware<PhotosRequestContext>.loggedPath(path)
        #expect(logged == RequestLogMiddleware<PhotosRequestContext>.loggedPathAnySpelling(path), "the fast reading differs from the general one")
        #expect(!logged.contains("0mi5abcdef"), "\(logged)")
        if path.lowercased().contains("0mi5abcdef") { #expect(logged.contains(SessionIDs.logForm("0mi5abcdef")), "\(logged)") }
    }
}

/// `LogLineSink`: lines below `notice` wait at most the interval and are written together;
/// a `notice` line is written at once, after them; nothing is lost at a flush.
@Suite("Log line sink")
struct LogLineSinkTests {
    final class Writes: Sendable {
        let kept = Mutex<[String]>([])
        var write: @Sendable ([UInt8]) -> Void { { bytes in self.kept.withLock { $0.append(String(decoding: bytes, as: UTF8.self)) } } }
        var all: [String] { kept.withLock { $0 } }
    }

    @Test("info lines wait and go out in one write within the interval; a notice line goes at once, after them; 0 writes each at once")
    func batching() async throws {
        // The timer writes what waits, in one write (polled: a loaded machine may be late).
        let timed = Writes()
        let quick = LogLineSink(flushMilliseconds: 20, write: timed.write)
        quick.take(Array("a\n".utf8), level: .info)
        quick.take(Array("b\n".utf8), level: .info)
        for _ in 0..<500 where timed.all.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(timed.all == ["a\nb\n"], "written together once the interval passed")

        // An interval longer than the test: what follows is decided by the levels and sizes alone.
        let writes = Writes()
        let sink = LogLineSink(flushMilliseconds: 600_000, write: writes.write)
        sink.take(Array("a\n".utf8), level: .info)
        sink.take(Array("b\n".utf8), level: .info)
        #expect(writes.all.isEmpty, "info lines are kept")
        sink.flush()
        #expect(writes.all == ["a\nb\n"], "a flush writes them together")
        sink.take(Array("c\n".utf8), level: .info)
        sink.take(Array("d\n".utf8), level: .notice)
        #expect(writes.all == ["a\nb\n", "c\nd\n"], "a notice line is written at once, after the lines before it")
        // Past 32 KiB the buffer is written at once.
        let long = Array(repeating: UInt8(ascii: "x"), count: 20_000) + [UInt8(ascii: "\n")]
        sink.take(long, level: .info)
        sink.take(long, level: .info)
        #expect(writes.all.count == 3 && writes.all[2].utf8.count == 40_002)
        sink.take(Array("e\n".utf8), level: .debug)
        sink.flush()
        #expect(writes.all.last == "e\n")

        let direct = Writes()
        let unbuffered = LogLineSink(flushMilliseconds: 0, write: direct.write)
        unbuffered.take(Array("f\n".utf8), level: .info)
        unbuffered.take(Array("g\n".utf8), level: .trace)
        #expect(direct.all == ["f\n", "g\n"])
    }
}
