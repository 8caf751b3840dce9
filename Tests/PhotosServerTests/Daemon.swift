import Foundation
import PhotosTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `photosd` process on a free port, for end-to-end tests over real HTTP.
final class Daemon: @unchecked Sendable {
    // @unchecked Sendable: `output` is guarded by `lock`; `process` is set once in `init`.
    let process = Process()
    private let lock = NSLock()
    private var output = Data()
    /// Signalled when the process's output reached its end (after it exited).
    private let outputDrained = DispatchSemaphore(value: 0)
    private(set) var port = 0

    static var binDirectory: String { BuiltProducts.binDirectory }
    static var packageRoot: String { BuiltProducts.packageRoot }

    /// Starts `photosd arguments…` in `directory` and waits until it listens.
    init(_ arguments: [String], in directory: String, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Self.binDirectory + "/photosd")
        process.arguments = ["--port", "0"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var env = ProcessInfo.processInfo.environment
        env["PHOTOSD_AUTH_BCRYPT_COST"] = "4"
        env["PHOTOSD_DATABASE_DURABILITY"] = "normal"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        let handle = pipe.fileHandleForReading
        try process.run()
        let reader = Thread { [lock, outputDrained] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                lock.lock()
                self.output.append(data)
                lock.unlock()
            }
            outputDrained.signal()
        }
        reader.start()
        let deadline = Date().addingTimeInterval(30)
        var found: Int?
        while found == nil && Date() < deadline && process.isRunning {
            usleep(20_000)
            if let match = log.firstMatch(of: /photosd listening on [0-9.]+:(\d+)/) { found = Int(match.1) }
        }
        guard let found else {
            process.terminate()
            throw DaemonError(message: "photosd did not start: \(log)")
        }
        port = found
    }

    struct DaemonError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Everything the process printed so far.
    var log: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: output, as: UTF8.self)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends SIGTERM (or `signal`) and returns the exit status.
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        // Its last lines ("database closed") may still be in the pipe.
        _ = outputDrained.wait(timeout: .now() + 5)
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// One HTTP request; returns the status and the JSON body.
    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }
}

/// Runs a program and returns its exit status and both output streams.
func runTool(_ executable: String, _ arguments: [String], stdin: String = "", in directory: String, environment: [String: String] = [:]) throws -> (Int32, String) {
    let result = try runProcess(executable, arguments, stdin: stdin, in: directory, environment: environment)
    return (result.status, result.output)
}
