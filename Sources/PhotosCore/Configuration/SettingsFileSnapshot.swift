import Configuration
import Foundation

/// The config file as swift-configuration's `JSONSnapshot` reads it, but for `audit.witnesses`:
/// an array of objects, which `JSONSnapshot` refuses, is handed on as its JSON text — the form
/// `PHOTOSD_AUDIT_WITNESSES` takes in the environment — and parsed by `WitnessEndpoint.list`.
public struct SettingsFileSnapshot: FileConfigSnapshot {
    public typealias ParsingOptions = JSONSnapshot.ParsingOptions

    private let json: JSONSnapshot

    public init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        let bytes = data.withUnsafeBytes { Data($0) }
        guard var object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any],
              var audit = object["audit"] as? [String: Any], let witnesses = audit["witnesses"], !(witnesses is String) else {
            json = try JSONSnapshot(data: data, providerName: providerName, parsingOptions: parsingOptions)
            return
        }
        let text = try JSONSerialization.data(withJSONObject: witnesses, options: [.sortedKeys, .fragmentsAllowed])
        audit["witnesses"] = String(decoding: text, as: UTF8.self)
        object["audit"] = audit
        let rewritten = Array(try JSONSerialization.data(withJSONObject: object))
        json = try JSONSnapshot(data: rewritten.span.bytes, providerName: providerName, parsingOptions: parsingOptions)
    }

    public var providerName: String { json.providerName }

    public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try json.value(forKey: key, type: type)
    }

    public var description: String { json.description }
    public var debugDescription: String { json.debugDescription }
}
