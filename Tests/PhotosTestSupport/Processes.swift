import Foundation
import PhotosdProcess
import Synchronization

/// Where the package and its built executables are.
public enum BuiltProducts {
    /// The package's root directory.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The directory holding the built `photosd` and `photos-admin`: next to the running test
    /// bundle, or `PHOTOSD_BIN_DIR`.
    public static let binDirectory: String = {
        if let explicit = ProcessInfo.processInfo.environment["PHOTOSD_BIN_DIR"] { return explicit }
        var url = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("photos-admin").path) { return url.path }
        }
        return packageRoot + "/.build/debug"
    }()
}

/// What a finished process left behind.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Both streams, stdout first.
    public var output: String { stdout + stderr }
}

/// Runs `executable` to completion in `directory`, with the built products first on `PATH`,
/// bcrypt at its cheapest and the login name `tester`, feeding it `stdin`.
///
/// The wait happens on a thread of its own, never on one of Swift's cooperative threads: a full
/// run has hundreds of tests on a pool as wide as the machine's cores (two in CI), and a test
/// blocking one for a child process's lifetime stalled every other test's awaits — enough to
/// push timing bounds measured in other tests (the PostgreSQL outage test's) past their limits.
public func runProcess(_ executable: String, _ arguments: [String], stdin: String = "", in directory: String, environment: [String: String] = [:]) async throws -> ProcessResult {
    try await offThePool { try runProcessBlocking(executable, arguments, stdin: stdin, in: directory, environment: environment) }
}

/// Runs `body` on a new thread and waits for it without holding a cooperative thread.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// `runProcess` for where no `await` is possible (a `defer`); blocks the calling thread.
/// The child is started with `posix_spawn` (`ChildProcess`), not Foundation's `Process`, whose
/// `run()` crashes now and then on Linux in a process with many descriptors open.
public func runProcessBlocking(_ executable: String, _ arguments: [String], stdin: String = "", in directory: String, environment: [String: String] = [:]) throws -> ProcessResult {
    // A child that exits without reading its input must not end this process with SIGPIPE.
    signal(SIGPIPE, SIG_IGN)
    var env = ProcessInfo.processInfo.environment
    env["PATH"] = BuiltProducts.binDirectory + ":" + (env["PATH"] ?? "/usr/bin:/bin")
    env["PHOTOSD_AUTH_BCRYPT_COST"] = "4"
    env["USER"] = "tester"
    env.removeValue(forKey: "PHOTOS_DB")
    for (key, value) in environment { env[key] = value }
    let input = try ChildProcess.pipe(), output = try ChildProcess.pipe(), errors = try ChildProcess.pipe()
    let child: ChildProcess
    do {
        child = try ChildProcess(
            executable: executable, arguments: arguments, directory: directory, environment: env,
            stdin: input.read, stdout: output.write, stderr: errors.write)
    } catch {
        for fd in [input.read, input.write, output.read, output.write, errors.read, errors.write] { close(fd) }
        throw error
    }
    for fd in [input.read, output.write, errors.write] { close(fd) }
    // Standard input on a thread of its own too: a child that does not read it must not block us.
    let writer = Thread {
        let handle = FileHandle(fileDescriptor: input.write, closeOnDealloc: true)
        try? handle.write(contentsOf: Data(stdin.utf8))
        try? handle.close()
    }
    writer.start()
    // Drain stderr on its own thread so a chatty process cannot block on a full pipe.
    let errorData = ErrorOutput()
    let reader = Thread {
        let handle = FileHandle(fileDescriptor: errors.read, closeOnDealloc: true)
        let data = handle.readDataToEndOfFile()
        errorData.value.withLock { $0 = data }
    }
    reader.start()
    let outData = FileHandle(fileDescriptor: output.read, closeOnDealloc: true).readDataToEndOfFile()
    let status = child.waitForExit()
    while errorData.value.withLock({ $0 == nil }) { usleep(1_000) }
    return ProcessResult(
        status: status, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errorData.value.withLock { $0 } ?? Data(), as: UTF8.self))
}

/// Starts `executable arguments…` with `posix_spawn` (`ChildProcess`: never Foundation's
/// `Process`, see `runProcessBlocking`), with this process's environment plus `environment`, in
/// `directory` (nil: this process's), its output and error on `stdout` and `stderr` (nil:
/// /dev/null), its input /dev/null. For a child the test watches or stops itself.
public func spawnProcess(
    _ executable: String, _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:],
    stdout: Int32? = nil, stderr: Int32? = nil
) throws -> ChildProcess {
    let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { if null >= 0 { close(null) } }
    let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    return try ChildProcess(
        executable: executable, arguments: arguments, directory: directory, environment: env,
        stdin: nil, stdout: stdout ?? null, stderr: stderr ?? null)
}

/// A process's standard error, filled in by a reader thread.
private final class ErrorOutput: Sendable {
    let value = Mutex<Data?>(nil)
}

/// SplitMix64: a small seeded generator, so a failing randomized run can be repeated exactly.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The python3 that has the project's Python test tools (Selenium, openapi-spec-validator,
/// opentelemetry-proto): the project's virtual environment, `.venv`, made by
/// `scripts/python-env` (`scripts/install-dependencies` fills it), else the first `python3` on
/// `PATH` — the tools are never installed into the system's Python.
public enum PythonTools {
    /// The virtual environment's interpreter, when there is one.
    static let virtualEnvironment = BuiltProducts.packageRoot + "/.venv/bin/python3"

    /// `python3 ARGUMENTS` as an executable and its arguments, for `runProcess` or `Process`.
    public static func command(_ arguments: [String]) -> (executable: String, arguments: [String]) {
        if FileManager.default.isExecutableFile(atPath: virtualEnvironment) { return (virtualEnvironment, arguments) }
        return ("/usr/bin/env", ["python3"] + arguments)
    }

    /// Whether `import MODULE` works in that python3.
    public static func canImport(_ module: String) -> Bool {
        let (executable, arguments) = command(["-c", "import \(module)"])
        return (try? runProcessBlocking(executable, arguments, in: "/tmp").status) == 0
    }
}
