import Foundation
import PhotosdProcess

extension PhotosdProcess {
    /// The `photosd` next to this executable (same build configuration).
    static var besideBenchmark: String {
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("photosd").path
    }

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
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
