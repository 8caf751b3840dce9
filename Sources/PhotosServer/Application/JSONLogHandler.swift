import Foundation
import Logging
import PhotosModel

/// `log.format: json`: one JSON object per line on standard error, for log collectors —
/// `time` (UTC, milliseconds), `level`, `message`, `label`, `source`, then the metadata as
/// fields (numbers as numbers, nested metadata as objects; a metadata key that would shadow one of
/// these is left out). Lines go whole to `LogLineSink.standard`, so lines from several threads
/// never interleave.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let sink: @Sendable ([UInt8], Logger.Level) -> Void

    /// A handler for `label` writing to standard error (`LogLineSink.standard`).
    public init(label: String) {
        self.init(label: label, sink: { LogLineSink.standard.take($0, level: $1) })
    }

    /// A handler for `label` handing each line (with its newline) and its level to `sink`.
    public init(label: String, sink: @escaping @Sendable ([UInt8], Logger.Level) -> Void) {
        self.label = label
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The fields every line has, which metadata does not override.
    static let reserved: Set<String> = ["time", "level", "message", "label", "source"]

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { $1 } }
        if let given = event.metadata { fields.merge(given) { $1 } }
        var json = JSONBuilder(capacity: 256)
        json.beginObject()
        json.key("time")
        json.string(ISO8601Timestamp.string(from: Date()))
        json.key("level")
        json.string(event.level.rawValue)
        json.key("message")
        json.string(event.message.description)
        json.key("label")
        json.string(label)
        json.key("source")
        json.string(event.source)
        for key in fields.keys.sorted() where !Self.reserved.contains(key) {
            json.key(key)
            Self.write(fields[key] ?? .string(""), to: &json)
        }
        json.endObject()
        var line = json.bytes
        line.append(UInt8(ascii: "\n"))
        sink(line, event.level)
    }

    private static func write(_ value: Logger.Metadata.Value, to json: inout JSONBuilder) {
        switch value {
        case .string(let text):
            json.string(text)
        case .stringConvertible(let convertible):
            switch convertible {
            case let number as Int: json.int(number)
            case let number as Int64: json.int(number)
            case let number as Double where number.isFinite: json.number(number)
            case let flag as Bool: json.bool(flag)
            default: json.string(convertible.description)
            }
        case .dictionary(let dictionary):
            json.beginObject()
            for key in dictionary.keys.sorted() {
                json.key(key)
                write(dictionary[key] ?? .string(""), to: &json)
            }
            json.endObject()
        case .array(let values):
            json.beginArray()
            for element in values { write(element, to: &json) }
            json.endArray()
        }
    }

}
