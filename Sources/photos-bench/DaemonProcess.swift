import Foundation

/// A `photosd` child process started by the benchmark on a free port.
final class DaemonProcess: @unchecked Sendable {
    // @unchecked Sendable: `output` is guarded by `lock`; the rest is set once in `init`.
    private let process = Process()
    private let lock = NSLock()
    private var output = ""
    private(set) var port = 0

    /// The `photosd` next to this executable (same build configuration).
    static var defaultBinary: String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("photosd").path
    }

    init(binary: String, database: String, environment: [String: String]) throws {
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw BenchError("no photosd at \(binary); build it first: swift build -c release --product photosd")
        }
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--port", "0", "--db", database]
        var env = ProcessInfo.processInfo.environment
        env["PHOTOSD_LOG_LEVEL"] = "notice"  // quiet, but still says where it listens
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                lock.lock()
                output += String(decoding: data, as: UTF8.self)
                lock.unlock()
            }
        }.start()
        let deadline = Date().addingTimeInterval(30)
        while port == 0 && Date() < deadline && process.isRunning {
            usleep(20_000)
            lock.lock()
            let text = output
            lock.unlock()
            if let match = text.firstMatch(of: /photosd listening on [0-9.]+:(\d+)/) { port = Int(match.1) ?? 0 }
        }
        guard port != 0 else {
            process.terminate()
            throw BenchError("photosd did not start: \(output)")
        }
    }

    var pid: Int32 { process.processIdentifier }

    /// Peak resident memory (VmHWM) in bytes, from /proc.
    var peakResidentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { return 0 }
        return kb * 1024
    }

    /// CPU time used so far (user + system), in seconds, from /proc.
    var cpuSeconds: Double { ProcessCPU.seconds(pid: pid) }

    /// CPU time of the daemon's writer thread so far, in seconds (nil if it has none by that name).
    var writerCPUSeconds: Double? { ProcessCPU.seconds(pid: pid, threadNamed: "sqlite-writer") }

    /// SIGTERM and wait; returns the exit status.
    func stop() -> Int32 {
        kill(pid, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
