import AuditTrail
import Foundation
import PhotosModel

/// One witness photosd asks to cosign its checkpoints (`audit.witnesses`): a C2SP tlog-witness
/// at `url` (photosd posts to `<url>/add-checkpoint`) whose cosignatures verify with `key`, a
/// note verifier key of type 0x04 (`photos-admin audit witness key` prints one).
public struct WitnessEndpoint: Sendable, Equatable, Codable {
    /// What logs and metrics call it (`photosd_witness_cosigned_size{witness}`).
    public var name: String
    /// The witness's prefix URL, `http://` or `https://`.
    public var url: String
    /// Its cosigner key, `<name>+<hex id>+<base64(0x04 ‖ Ed25519 public key)>`.
    public var key: String

    /// A witness.
    public init(name: String, url: String, key: String) {
        self.name = name
        self.url = url
        self.key = key
    }

    /// The most witnesses one log asks (a note carries at most 100 signatures, C2SP signed-note).
    public static let maxCount = 32

    /// `key`, parsed (checked when the configuration is read).
    public var cosignerKey: CosignerKey {
        get throws {
            guard let key = CosignerKey(key) else { throw PhotosError.badRequest("configuration audit.witnesses: \(name)'s key is not a cosigner key") }
            return key
        }
    }

    /// `<url>/add-checkpoint`.
    public var addCheckpointURL: String {
        (url.hasSuffix("/") ? String(url.dropLast()) : url) + "/add-checkpoint"
    }

    /// The witnesses of `audit.witnesses`, a JSON array of `{"name", "url", "key"}` objects.
    /// Each field is required; names and keys are unique; every key is a cosigner key (type
    /// 0x04) and every URL `http://` or `https://`.
    public static func list(parsing text: String) throws -> [WitnessEndpoint] {
        func refuse(_ what: String) -> PhotosError {
            PhotosError.badRequest("configuration audit.witnesses \(what)")
        }
        guard let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any] else {
            throw refuse("must be a list of {\"name\", \"url\", \"key\"} objects")
        }
        guard array.count <= maxCount else { throw refuse("lists \(array.count) witnesses; at most \(maxCount)") }
        var witnesses: [WitnessEndpoint] = []
        for (index, element) in array.enumerated() {
            guard let object = element as? [String: Any] else { throw refuse("[\(index)] must be an object with name, url and key") }
            if let unknown = object.keys.sorted().first(where: { !["name", "url", "key"].contains($0) }) {
                throw refuse("[\(index)] has \(unknown.prefix(40)), which is not name, url or key")
            }
            guard let name = object["name"] as? String, !name.isEmpty, name.count <= 100,
                  !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\"" || $0 == "\\" }) else {
                throw refuse("[\(index)].name must be a non-empty string of at most 100 characters")
            }
            guard let url = object["url"] as? String, let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil,
                  parsed.query == nil else {
                throw refuse("[\(index)].url (\(name)) must be the witness's http:// or https:// prefix URL, without a query")
            }
            guard let key = object["key"] as? String, CosignerKey(key) != nil else {
                throw refuse("[\(index)].key (\(name)) must be the witness's cosigner key, <name>+<hex id>+<base64> of type 0x04 (photos-admin audit witness key prints one)")
            }
            guard !witnesses.contains(where: { $0.name == name }) else { throw refuse("names \(name) twice") }
            guard !witnesses.contains(where: { $0.key == key }) else { throw refuse("lists the key of \(name) twice") }
            witnesses.append(WitnessEndpoint(name: name, url: url, key: key))
        }
        return witnesses
    }
}
