import Foundation
import Logging
import PhotosModel
import Synchronization

/// `log.format: text` (the default): swift-log's `StreamLogHandler` line, byte for byte —
/// `<time> <level> <label>: <key=value …, sorted> [<source>] <message>` with the time in local
/// time to the second (`%Y-%m-%dT%H:%M:%S%z`) — built into one buffer and handed whole to
/// `LogLineSink.standard`, as `JSONLogHandler` hands its lines.
///
/// `StreamLogHandler` builds the line through several intermediate strings (the merged metadata,
/// each `key=value`, the joined text), formats the time with `strftime` for every line and
/// writes through a locked, flushed `FILE`: with a request line per request, the request log was
/// 5.7 % of photosd's CPU in the stack journey (docs/benchmarks.md, "Other figures").
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: @Sendable ([UInt8], Logger.Level) -> Void

    /// A handler for `label` writing to standard error (`LogLineSink.standard`).
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.init(label: label, metadataProvider: metadataProvider, sink: { LogLineSink.standard.take($0, level: $1) })
    }

    /// A handler for `label` handing each line (with its newline) and its level to `sink`.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil, sink: @escaping @Sendable ([UInt8], Logger.Level) -> Void) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { fields.merge(provided) { $1 } }
        if let given = event.metadata, !given.isEmpty { fields.merge(given) { $1 } }
        if let error = event.error {
            fields["error.message"] = "\(error)"
            fields["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        line.append(contentsOf: Self.timestamps.text(for: time(nil)))
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: event.level.rawValue.utf8)
        if !label.isEmpty {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: label.utf8)
        }
        line.append(UInt8(ascii: ":"))
        for key in fields.keys.sorted() {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: key.utf8)
            line.append(UInt8(ascii: "="))
            switch fields[key] {
            case .string(let text)?: line.append(contentsOf: text.utf8)
            case let value?: line.append(contentsOf: value.description.utf8)
            case nil: break
            }
        }
        line.append(contentsOf: " [".utf8)
        line.append(contentsOf: event.source.utf8)
        line.append(contentsOf: "] ".utf8)
        line.append(contentsOf: event.message.description.utf8)
        line.append(UInt8(ascii: "\n"))
        sink(line, event.level)
    }

    /// The time text of the current second, formatted once per second rather than per line.
    static let timestamps = Timestamps()

    /// `strftime("%Y-%m-%dT%H:%M:%S%z")` of a second in local time, the newest one kept.
    final class Timestamps: Sendable {
        private let newest = Mutex<(second: time_t, text: [UInt8])>((-1, []))

        /// The text of `second`.
        func text(for second: time_t) -> [UInt8] {
            if let kept = newest.withLock({ $0.second == second ? $0.text : nil }) { return kept }
            var moment = second
            var local = tm()
            var buffer = [Int8](repeating: 0, count: 64)
            guard localtime_r(&moment, &local) != nil else { return Array("<unknown>".utf8) }
            let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            let text = buffer.prefix(count).map { UInt8(bitPattern: $0) }
            newest.withLock { $0 = (second, text) }
            return text
        }
    }
}
