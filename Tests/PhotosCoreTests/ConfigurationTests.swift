import Configuration
import DatabaseAccess
import Foundation
@testable import PhotosCore
import PhotosModel
import PhotosTestSupport
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    static let shippedFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/photosd.json").path

    @Test("config/photosd.json holds exactly the built-in defaults")
    func shippedFileEqualsDefaults() async throws {
        var loaded = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: [:])
        // Where it was read from is not a setting.
        #expect(loaded.filePath == Self.shippedFile)
        loaded.filePath = nil
        #expect(loaded == PhotosConfiguration())
    }

    @Test("config/photosd.json lists every setting the configuration reads, and no other")
    func shippedFileListsEveryKey() throws {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.shippedFile)))
        func keys(_ value: Any, _ prefix: String) -> [String] {
            guard let object = value as? [String: Any] else { return [prefix] }
            return object.flatMap { keys($0.value, prefix.isEmpty ? $0.key : prefix + "." + $0.key) }
        }
        let inFile = Set(keys(object, ""))
        let read = Set(PhotosConfiguration.defaultValues.keys.map { $0.components.joined(separator: ".") })
        #expect(inFile.subtracting(read).isEmpty, "in the file but never read: \(inFile.subtracting(read).sorted())")
        #expect(read.subtracting(inFile).isEmpty, "read but missing from the file: \(read.subtracting(inFile).sorted())")
    }

    @Test("environment variables override the file; flags override both")
    func overrides() async throws {
        let loaded = try await PhotosConfiguration.load(
            filePath: Self.shippedFile,
            environment: ["PHOTOSD_SERVER_PORT": "9090", "PHOTOSD_DATABASE_PATH": "/tmp/x.db", "PHOTOSD_DATABASE_DURABILITY": "normal"],
            overrides: ["server.port": .init(.int(7070), isSecret: false)])
        #expect(loaded.port == 7070)
        #expect(loaded.databasePath == "/tmp/x.db")
        #expect(loaded.durability == .normal)
    }

    @Test("bad values give a clear error naming the setting")
    func badValues() async throws {
        await #expect(throws: PhotosError.badRequest("configuration server.port must be an integer (from the environment: PHOTOSD_SERVER_PORT)")) {
            try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_SERVER_PORT": "eighty"])
        }
        await #expect(throws: PhotosError.self) {
            try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_DATABASE_DURABILITY": "sometimes"])
        }
        await #expect(throws: PhotosError.self) {
            try await PhotosConfiguration.load(filePath: "/nonexistent/photosd.json", environment: [:])
        }
    }

    @Test("a bad value's error says where it came from: a flag, the environment (named), the config file (named), or nothing for a default")
    func badValueSource() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("photosd.json")
        try #"{"auth": {"signInMaxAttempts": "many"}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try await PhotosConfiguration.load(filePath: file, environment: [:])
            Issue.record("a string for an integer was taken")
        } catch let error as PhotosError {
            #expect(error.message == "configuration auth.signInMaxAttempts must be an integer (from config file \(file))")
        }
        do {
            _ = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: ["PHOTOSD_AUTH_SIGN_IN_MAX_ATTEMPTS": "many"])
            Issue.record("a string for an integer was taken")
        } catch let error as PhotosError {
            #expect(error.message.hasSuffix("(from the environment: PHOTOSD_AUTH_SIGN_IN_MAX_ATTEMPTS)"), "\(error.message)")
        }
        do {
            _ = try await PhotosConfiguration.load(filePath: Self.shippedFile, environment: [:], overrides: ["server.port": .init(.int(70_000), isSecret: false)])
            Issue.record("port 70000 was taken")
        } catch let error as PhotosError {
            #expect(error.message.hasSuffix("(from a command-line flag)"), "\(error.message)")
        }
        #expect(PhotosConfiguration.environmentVariable(for: "tracing.otlpEndpoint") == "PHOTOSD_TRACING_OTLP_ENDPOINT")
    }
}
