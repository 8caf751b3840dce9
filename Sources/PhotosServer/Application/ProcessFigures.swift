import Foundation

/// This process's CPU time, resident memory and open descriptors, read from `/proc/self` (the
/// figures Prometheus's own clients export as `process_cpu_seconds_total`,
/// `process_resident_memory_bytes` and `process_open_fds`). Nil where `/proc` is not there.
struct ProcessFigures: Sendable {
    var cpuSeconds: Double
    var residentBytes: Int
    var openDescriptors: Int

    static func read() -> ProcessFigures? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return nil }
        // The command name (field 2) is in parentheses and may hold spaces: count after it.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pages = statm.split(separator: " ")
        guard pages.count > 1, let resident = Int(pages[1]) else { return nil }
        return ProcessFigures(
            cpuSeconds: (user + system) / (ticks > 0 ? ticks : 100), residentBytes: resident * Int(sysconf(Int32(_SC_PAGESIZE))),
            openDescriptors: descriptors.count)
    }
}
