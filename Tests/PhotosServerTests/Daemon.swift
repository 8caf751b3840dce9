import Foundation
import PhotosTestSupport
import PhotosdProcess
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `photosd` process for end-to-end tests: the built binary, bcrypt at its cheapest and
/// durability `normal` unless the test says otherwise.
final class Daemon: Sendable {
    let process: PhotosdProcess

    static var binDirectory: String { BuiltProducts.binDirectory }
    static var packageRoot: String { BuiltProducts.packageRoot }

    /// Starts `photosd arguments…` in `directory` and waits until it listens.
    /// (The wait for it to listen happens off Swift's cooperative threads: see `runProcess`.)
    init(_ arguments: [String], in directory: String, environment: [String: String] = [:]) async throws {
        let defaults = ["PHOTOSD_AUTH_BCRYPT_COST": "4", "PHOTOSD_DATABASE_DURABILITY": "normal"]
        let binary = Self.binDirectory + "/photosd"
        process = try await offThePool {
            try PhotosdProcess(binary: binary, arguments: arguments, directory: directory, environment: defaults.merging(environment) { $1 })
        }
    }

    var port: Int { process.port }
    var log: String { process.log }

    /// Waits until the log holds `text` (at most `seconds`); true if it came. Request lines are
    /// written in batches: one may reach the log a moment after its answer reached the client.
    func waitForLog(_ text: String, seconds: Int = 10) async -> Bool {
        let limit = ContinuousClock.now + .seconds(seconds)
        while !log.contains(text) {
            guard ContinuousClock.now < limit else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
    var baseURL: String { process.baseURL }

    /// Its console's base URL, once it says where the console listens (at most 20 s; nil if never).
    func consoleURL() async throws -> String? {
        let limit = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < limit {
            if let url = process.consoleURL { return url }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.consoleURL
    }

    /// Sends SIGTERM (or `signal`) and returns the exit status.
    func stop(signal: Int32 = SIGTERM) -> Int32 { process.stop(signal: signal) }

    /// One HTTP request; returns the status and the JSON body. A session's requests carry its
    /// secret (`SessionSecretBook`) unless `headers` sets `Authorization`.
    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let authorization = SessionSecretBook.authorization(for: path) { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        if status == 201 { SessionSecretBook.learn(json) }
        return (status, json)
    }
}

/// Creates `data/photos.db` (photosd's default database) under `directory` with
/// `photos-admin migrate`, as an operator would before adding users: only `migrate` creates a
/// database, and only in a directory that exists.
func migrateDefaultDatabase(in directory: String) async throws {
    try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
    let (status, output) = try await runTool(Daemon.binDirectory + "/photos-admin", ["migrate", "--db", "data/photos.db"], in: directory)
    #expect(status == 0, "\(output)")
}

/// Runs a program and returns its exit status and both output streams.
func runTool(_ executable: String, _ arguments: [String], stdin: String = "", in directory: String, environment: [String: String] = [:]) async throws -> (Int32, String) {
    let result = try await runProcess(executable, arguments, stdin: stdin, in: directory, environment: environment)
    return (result.status, result.output)
}
