import Foundation
import Synchronization

/// A real `photosd` child process on a free port (`--port 0`), for the end-to-end tests and
/// `photos-bench`: started, waited for until it says where it listens, stopped with a signal.
public final class PhotosdProcess: Sendable {
    private let process: ChildProcess
    private let output = OutputBuffer()
    /// Signalled when the process's output reached its end (after it exited).
    private let outputDrained = DispatchSemaphore(value: 0)
    /// The port it listens on.
    public let port: Int

    /// Starts `binary --port 0 arguments…` in `directory` (nil: this process's) with the
    /// environment plus `environment`, and waits (at most 30 s) until it listens: until it
    /// prints `<listening> <address>:<port>` (another server — `photos-admin audit witness
    /// serve` — is started with its own arguments alone: `portArguments` empty).
    public init(
        binary: String, arguments: [String], directory: String? = nil, environment: [String: String] = [:],
        portArguments: [String] = ["--port", "0"], listening: String = "photosd listening on"
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw LaunchError(message: "no photosd at \(binary); build it first (swift build --product photosd)")
        }
        // The console and the metrics listener on any free port too (unless the caller says
        // otherwise), so processes started side by side never compete for their defaults.
        let childEnvironment = ProcessInfo.processInfo.environment
            .merging(["PHOTOSD_CONSOLE_PORT": "0", "PHOTOSD_METRICS_PORT": "0"]) { $1 }
            .merging(environment) { $1 }
        let pipe = try ChildProcess.pipe()
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: binary, arguments: portArguments + arguments, directory: directory, environment: childEnvironment,
                stdin: nil, stdout: pipe.write, stderr: pipe.write)
        } catch {
            close(pipe.read)
            close(pipe.write)
            throw LaunchError(message: "\(error)")
        }
        close(pipe.write)
        self.process = process
        let handle = FileHandle(fileDescriptor: pipe.read, closeOnDealloc: true)
        let reader = Thread { [output, outputDrained] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                output.data.withLock { $0.append(data) }
            }
            outputDrained.signal()
        }
        reader.start()
        let deadline = Date().addingTimeInterval(30)
        var found: Int?
        while found == nil && Date() < deadline && process.isRunning {
            usleep(20_000)
            let log = output.data.withLock { String(decoding: $0, as: UTF8.self) }
            if let range = log.range(of: listening + " "), let match = log[range.upperBound...].firstMatch(of: /^[0-9.]+:(\d+)/) { found = Int(match.1) }
        }
        guard let found else {
            process.signal(SIGTERM)
            throw LaunchError(message: "\((binary as NSString).lastPathComponent) did not start: \(output.data.withLock { String(decoding: $0, as: UTF8.self) })")
        }
        port = found
    }

    deinit {
        if process.isRunning { process.signal(SIGTERM) }
    }

    /// Why `init` failed.
    public struct LaunchError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Its process id.
    public var pid: Int32 { process.pid }

    /// Everything it printed so far (stdout and stderr).
    public var log: String { output.data.withLock { String(decoding: $0, as: UTF8.self) } }

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `http://127.0.0.1:PORT` of its operator console, once it said where it listens (nil
    /// when it serves none).
    public var consoleURL: String? {
        guard let match = log.firstMatch(of: /photosd console listening on [0-9.]+:(\d+)/) else { return nil }
        return "http://127.0.0.1:\(match.1)"
    }

    /// `http://127.0.0.1:PORT` of its metrics listener, once it said where it listens (nil when
    /// it serves none).
    public var metricsURL: String? {
        guard let match = log.firstMatch(of: /photosd metrics listening on [0-9.]+:(\d+)/) else { return nil }
        return "http://127.0.0.1:\(match.1)"
    }

    /// Sends `signal` (SIGTERM by default), waits for the exit and its last output, and returns
    /// the exit status.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32 {
        process.signal(signal)
        let status = process.waitForExit()
        // Its last lines ("database closed") may still be in the pipe.
        _ = outputDrained.wait(timeout: .now() + 5)
        return status
    }
}

/// What the process printed, appended by the reader thread.
private final class OutputBuffer: Sendable {
    let data = Mutex(Data())
}
