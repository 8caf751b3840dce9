import Crypto
import Foundation
import PhotosTestSupport
import Testing

/// PhotosClient's HTTP layer is generated from docs/openapi.yaml and committed
/// (scripts/generate-client); this fails when the document changed without regenerating, or a
/// generated file was edited by hand.
@Suite("PhotosClient: generated code")
struct GeneratedCodeTests {
    @Test("Sources/PhotosClient/Generated matches docs/openapi.yaml (run scripts/generate-client)")
    func fresh() throws {
        let root = BuiltProducts.packageRoot
        let stamp = try String(contentsOfFile: root + "/Sources/PhotosClient/Generated/GENERATED-FROM", encoding: .utf8)
        var recorded: [String: String] = [:]
        for line in stamp.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            recorded[parts[1]] = parts[0]
        }
        #expect(recorded["docs/openapi.yaml"] != nil)
        let generated = try FileManager.default.contentsOfDirectory(atPath: root + "/Sources/PhotosClient/Generated")
            .filter { $0.hasSuffix(".swift") }.map { "Sources/PhotosClient/Generated/" + $0 }
        #expect(Set(generated).isSubset(of: Set(recorded.keys)), "a generated file not recorded: run scripts/generate-client")
        #expect(generated.count >= 2)
        for (path, hash) in recorded {
            let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
            let actual = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            #expect(actual == hash, "\(path) changed since scripts/generate-client ran: run it again")
        }
    }
}
