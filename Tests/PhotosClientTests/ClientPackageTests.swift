import Foundation
import PhotosTestSupport
import Testing

/// An app that depends on this repository for `PhotosClient` alone, made from the README's lines:
/// it resolves the client's packages and nothing of the server's, may use swift-crypto 4 itself
/// (the server uses 3), and builds without a warning from this repository's code — also with
/// `PhotosClientTesting` (docs/client.md's fake-server example, run).
@Suite("PhotosClient: an app made from the README's dependency lines")
struct ClientPackageTests {
    /// What the client needs: its three packages and the one they use.
    static let clientPackages: Set<String> = ["swift-openapi-runtime", "swift-openapi-urlsession", "swift-http-types", "swift-collections"]
    /// What the app adds itself: swift-crypto 4 and its swift-asn1.
    static let appPackages: Set<String> = ["swift-crypto", "swift-asn1"]

    @Test("resolves only the client's packages, takes swift-crypto 4 beside them, builds without a warning")
    func appResolvesTheClientAlone() async throws {
        let lines = try DocBlocks.block("client-dependency", in: "README.md").split(separator: "\n").map(String.init)
        let packageLine = try #require(lines.first { $0.contains(".package(") }, "the README shows a .package line")
        let productLine = try #require(lines.first { $0.contains(".product(") }, "the README shows a .product line")
        #expect(packageLine.contains("traits: []"))
        let testingLine = try DocBlocks.block("client-testing-dependency", in: "docs/client.md")

        // The README's line says `../photosd`: the app sits beside a folder of that name.
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createSymbolicLink(atPath: directory.file("photosd"), withDestinationPath: BuiltProducts.packageRoot)
        let app = directory.file("ShopApp")
        try FileManager.default.createDirectory(atPath: app + "/Sources/ShopApp", withIntermediateDirectories: true)
        let manifest = """
            // swift-tools-version: 6.2
            import PackageDescription

            let package = Package(
                name: "ShopApp",
                platforms: [.macOS(.v15), .iOS(.v16)],
                dependencies: [
                    \(packageLine.trimmingCharacters(in: .whitespaces))
                    .package(url: "https://github.com/apple/swift-crypto", from: "4.0.0"),
                ],
                targets: [
                    .executableTarget(name: "ShopApp", dependencies: [
                        \(productLine.trimmingCharacters(in: .whitespaces))
                    ]),
                    // docs/client.md's example on the fake server (PhotosClientTesting).
                    .executableTarget(name: "ShopPreview", dependencies: [
                        \(testingLine.trimmingCharacters(in: .whitespaces))
                        \(productLine.trimmingCharacters(in: .whitespaces))
                    ]),
                    // The app's own use of swift-crypto 4 (resolved with the client; not built
                    // here: BoringSSL's 1,600 C files would only slow the tests beside it).
                    .target(name: "Receipts", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
                ]
            )
            """
        try manifest.write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
        // The app's code: docs/client.md's coordinators as they are shown, and a use of swift-crypto 4.
        try FileManager.default.createDirectory(atPath: app + "/Sources/Receipts", withIntermediateDirectories: true)
        try "import Crypto\npublic func digest(_ text: String) -> String { SHA256.hash(data: Array(text.utf8)).description }\n"
            .write(toFile: app + "/Sources/Receipts/Receipts.swift", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            atPath: BuiltProducts.packageRoot + "/Tests/PhotosClientTests/ReadmeExample.swift",
            toPath: app + "/Sources/ShopApp/ShopCoordinator.swift")
        let main = """
            import Foundation
            import PhotosClient

            @MainActor func run() async {
                let shop = ShopCoordinator(server: URL(string: "http://127.0.0.1:9")!)
                let tabs = TabsCoordinator(server: URL(string: "http://127.0.0.1:9")!)
                print(shop.paths, tabs.sheets, ShopCoordinator.title(of: Screen(.unknown("share"))))
            }
            await run()
            """
        try main.write(toFile: app + "/Sources/ShopApp/main.swift", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: app + "/Sources/ShopPreview", withIntermediateDirectories: true)
        try DocBlocks.block("client-testing-example", in: "docs/client.md")
            .write(toFile: app + "/Sources/ShopPreview/main.swift", atomically: true, encoding: .utf8)

        let resolved = try await runProcess("/usr/bin/env", ["swift", "package", "resolve"], in: app)
        try #require(resolved.status == 0, "swift package resolve failed:\n\(resolved.output)")
        let pins = try Self.pins(app + "/Package.resolved")
        #expect(Set(pins.keys) == Self.clientPackages.union(Self.appPackages), "resolved: \(pins.keys.sorted())")
        #expect(pins["swift-crypto"]?.hasPrefix("4.") == true, "swift-crypto \(pins["swift-crypto"] ?? "missing")")

        let built = try await runProcess("/usr/bin/env", ["swift", "build", "--target", "ShopApp"], in: app)
        try #require(built.status == 0, "the app did not build:\n\(built.output)")
        let warnings = built.output.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(warnings.isEmpty, "warnings:\n\(warnings.joined(separator: "\n"))")

        // The fake server's example, as docs/client.md shows it: built with the client's packages
        // only, and run (no network: the fake is in memory).
        let preview = try await runProcess("/usr/bin/env", ["swift", "run", "ShopPreview"], in: app)
        try #require(preview.status == 0, "the preview did not build or run:\n\(preview.output)")
        #expect(preview.stdout.contains("[push photo 2]"), "\(preview.stdout)")
        let previewWarnings = preview.output.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(previewWarnings.isEmpty, "warnings:\n\(previewWarnings.joined(separator: "\n"))")
    }

    @Test("the package's iOS floor is the client's (iOS 16), not the server packages' (iOS 17)")
    func platformFloor() async throws {
        // A scratch path of its own: the tests' `swift test` holds the package's .build.
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let dumped = try await runProcess(
            "/usr/bin/env", ["swift", "package", "--package-path", BuiltProducts.packageRoot, "--scratch-path", scratch.path, "dump-package"],
            in: scratch.path)
        try #require(dumped.status == 0, "\(dumped.output)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8)) as? [String: Any])
        let platforms = (manifest["platforms"] as? [[String: Any]] ?? []).reduce(into: [String: String]()) {
            $0[$1["platformName"] as? String ?? ""] = $1["version"] as? String
        }
        #expect(platforms["ios"] == "16.0")
    }

    /// Package.resolved's pins: identity → version.
    static func pins(_ path: String) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        var pins: [String: String] = [:]
        for pin in object?["pins"] as? [[String: Any]] ?? [] {
            guard let identity = pin["identity"] as? String else { continue }
            pins[identity] = (pin["state"] as? [String: Any])?["version"] as? String ?? "unversioned"
        }
        return pins
    }
}
