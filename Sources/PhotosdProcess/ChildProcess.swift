import CSpawn
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests and `photos-bench`.
///
/// Not Foundation's `Process`: on Linux its `run()` crashes now and then (a SIGSEGV in
/// `findMaximumOpenFromProcSelfFD`, which copies a whole 256-byte `d_name` out of each
/// `/proc/self/fd` entry and reads past glibc's buffer when the page after it is unmapped —
/// swift-corelibs-foundation PR #5472, not in this toolchain). A test process with hundreds of
/// descriptors open, spawning children from many tests at once, met it (a full run crashed).
/// Here nothing scans `/proc/self/fd`: `posix_spawn` (through the CSpawn target, for glibc's
/// chdir and closefrom file actions) gives the child exactly the three descriptors it is told to
/// and closes every other in the child.
public final class ChildProcess: Sendable {
    /// Its process id.
    public let pid: pid_t
    /// Its wait status once reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Why a spawn failed.
    public struct SpawnError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Starts `executable arguments…` (an absolute path) in `directory` (nil: this process's)
    /// with exactly `environment`, its standard input, output and error on the given descriptors
    /// (which it gets as 0, 1 and 2; nil input: /dev/null).
    public init(executable: String, arguments: [String], directory: String?, environment: [String: String], stdin: Int32?, stdout: Int32, stderr: Int32) throws {
        let cArguments = ([executable] + arguments).map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var child: pid_t = 0
        let status = photosd_spawn(executable, cArguments, cEnvironment, directory, stdin ?? -1, stdout, stderr, &child)
        guard status == 0 else { throw SpawnError(message: "cannot start \(executable): \(String(cString: strerror(status)))") }
        pid = child
    }

    deinit {
        if isRunning { kill(pid, SIGKILL); _ = waitForExit() }
    }

    /// True until it has exited (reaping it when it has).
    public var isRunning: Bool {
        reaped.withLock { reaped in
            if reaped != nil { return false }
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result == -1 && errno == ECHILD) {
                reaped = result == pid ? status : 0
                return false
            }
            return true
        }
    }

    /// Waits for it to exit; returns its exit code, or the number of the signal that ended it
    /// (as Foundation's `terminationStatus` does).
    @discardableResult
    public func waitForExit() -> Int32 {
        if let status = reaped.withLock({ $0 }) { return Self.code(status) }
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, 0)
            if result == pid { break }
            if result == -1 && errno == EINTR { continue }
            // Reaped meanwhile by `isRunning` on another thread.
            if let known = reaped.withLock({ $0 }) { return Self.code(known) }
            status = 0
            break
        }
        reaped.withLock { $0 = status }
        return Self.code(status)
    }

    /// Sends `signal`.
    public func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    static func code(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : signal
    }

    /// A pipe whose two ends are closed on exec from the start (a child gets an end only
    /// through the spawn's dup2): (read, write).
    public static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        let status = photosd_pipe(&ends)
        guard status == 0 else { throw SpawnError(message: "pipe: \(String(cString: strerror(status)))") }
        return (ends[0], ends[1])
    }
}
