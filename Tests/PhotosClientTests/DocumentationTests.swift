import Foundation
import PhotosTestSupport
import Testing

/// The two products' DocC catalogs build without a warning against the modules as built: every
/// symbol they link exists (DocC's own check, `--warnings-as-errors`), so they cannot drift.
@Suite("PhotosClient: DocC")
struct DocumentationTests {
    @Test(
        "PhotosClient.docc and PhotosClientTesting.docc convert with docc, no warning, against the built modules' symbol graphs",
        .enabled(if: FileManager.default.isExecutableFile(atPath: DocumentationTests.toolchain + "/docc"), "needs the toolchain's docc"),
        arguments: ["PhotosClient", "PhotosClientTesting"])
    func catalog(module: String) async throws {
        let work = try TemporaryDirectory()
        defer { work.remove() }
        var machine = utsname()
        uname(&machine)
        let arch = withUnsafeBytes(of: &machine.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let extracted = try await runProcess(Self.toolchain + "/swift-symbolgraph-extract", [
            "-module-name", module, "-I", BuiltProducts.binDirectory + "/Modules", "-target", "\(arch)-unknown-linux-gnu",
            "-output-dir", work.path, "-minimum-access-level", "public",
        ], in: work.path)
        try #require(extracted.status == 0, "\(extracted.output)")
        let converted = try await runProcess(Self.toolchain + "/docc", [
            "convert", BuiltProducts.packageRoot + "/Sources/\(module)/\(module).docc", "--additional-symbol-graph-dir", work.path,
            "--fallback-display-name", module, "--fallback-bundle-identifier", "org.photosd.\(module)",
            "--output-path", work.file("out"), "--analyze", "--warnings-as-errors",
        ], in: work.path)
        #expect(converted.status == 0, "\(converted.output)")
        #expect(!converted.output.contains("warning:"), "\(converted.output)")
    }

    /// The directory of the `swift` the tests run with (docc and swift-symbolgraph-extract are
    /// beside it).
    static let toolchain: String = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for directory in path.split(separator: ":") {
            let swift = String(directory) + "/swift"
            if FileManager.default.isExecutableFile(atPath: swift) {
                return URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent().path
            }
        }
        return "/usr/bin"
    }()
}
