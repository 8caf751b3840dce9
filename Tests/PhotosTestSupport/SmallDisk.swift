import Foundation
import PhotosdProcess

/// A small tmpfs mounted for one test: a real disk that fills up.
public struct SmallDisk {
    public let path: String

    /// True where this process may mount a tmpfs (root on Linux); the tests that need one are
    /// skipped elsewhere, saying why.
    public static let canMount: Bool = {
        guard let directory = try? TemporaryDirectory() else { return false }
        defer { directory.remove() }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory.path]) else { return false }
        _ = run("/bin/umount", [directory.path])
        return true
    }()

    public init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) else { throw POSIXError(.EPERM) }
    }

    public func grow(toMegabytes megabytes: Int) -> Bool {
        Self.run("/bin/mount", ["-o", "remount,size=\(megabytes)m", path])
    }

    public func unmount() { _ = Self.run("/bin/umount", ["-l", path]) }

    @discardableResult
    public static func run(_ tool: String, _ arguments: [String]) -> Bool {
        guard let process = try? spawnProcess(tool, arguments) else { return false }
        return process.waitForExit() == 0
    }
}
