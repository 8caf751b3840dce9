import Foundation

/// The independent verifier: `Tests/Fixtures/go-tlog-verifier/main.go`, built against the Go
/// checksum database's own `sumdb/note` and `sumdb/tlog` (Debian's golang-golang-x-mod-dev, GOPATH
/// mode, no network; `scripts/install-dependencies` installs both) into a temporary directory,
/// once per test process.
public enum GoTlogVerifier {
    /// Where Debian puts the Go packages.
    static let goPath = "/usr/share/gocode"

    private static let built = Task { () throws -> String in
        let directory = NSTemporaryDirectory() + "photosd-go-tlog-verifier-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let source = BuiltProducts.packageRoot + "/Tests/Fixtures/go-tlog-verifier/main.go"
        let result = try await runProcess(
            "/usr/bin/go", ["build", "-o", directory + "/verifier", source], in: directory,
            environment: ["GO111MODULE": "off", "GOPATH": goPath, "GOCACHE": directory + "/cache", "GOFLAGS": "", "HOME": directory])
        guard result.status == 0 else { throw BuildFailed(output: result.output) }
        return directory + "/verifier"
    }

    /// The Go build failed (its output says why: Go or golang-golang-x-mod-dev missing?).
    public struct BuildFailed: Error, CustomStringConvertible {
        public let output: String
        public var description: String { "building the Go verifier failed (scripts/install-dependencies installs golang-go and golang-golang-x-mod-dev): \(output)" }
    }

    /// Runs the verifier on one request (see main.go): "ok" and status 0, or the failure and 1.
    public static func check(_ request: [String: Any]) async throws -> ProcessResult {
        let executable = try await built.value
        let json = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        return try await runProcess(executable, [], stdin: json, in: NSTemporaryDirectory())
    }
}
