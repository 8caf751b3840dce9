import Foundation

/// CPU time of a process, or of its threads with a given name, read from /proc (Linux).
///
/// Per-thread figures say which part of photosd a change made cheaper: the writer thread
/// (`sqlite-writer`, named by `WorkerThread`) runs every audited action's transaction, one at
/// a time, so its CPU per action bounds the throughput of the whole daemon.
enum ProcessCPU {
    /// User + system CPU seconds of process `pid`.
    static func seconds(pid: Int32) -> Double {
        times(statPath: "/proc/\(pid)/stat") ?? 0
    }

    /// User + system CPU seconds of the threads of `pid` named `name` (nil if none is).
    static func seconds(pid: Int32, threadNamed name: String) -> Double? {
        total(under: "/proc/\(pid)/task", named: name)
    }

    /// User + system CPU seconds of one PostgreSQL server on this machine: its postmaster, with
    /// what its exited children used (it reaps the backends of closed connections, so their
    /// time stays counted), and its children now running. Nil when `postmaster` is not a
    /// `postgres` process here. Only this server's processes: another cluster on the machine
    /// stopping meanwhile (a test's own) no longer takes its time out of the figure.
    static func seconds(postgresServer postmaster: Int32) -> Double? {
        guard let comm = try? String(contentsOfFile: "/proc/\(postmaster)/comm", encoding: .utf8),
              comm.trimmingCharacters(in: .newlines) == "postgres",
              var total = times(statPath: "/proc/\(postmaster)/stat", withExitedChildren: true),
              let ids = try? FileManager.default.contentsOfDirectory(atPath: "/proc")
        else { return nil }
        for id in ids where id.allSatisfy(\.isNumber) {
            guard parent(of: "/proc/\(id)/stat") == postmaster, let seconds = times(statPath: "/proc/\(id)/stat") else { continue }
            total += seconds
        }
        return total
    }

    /// The parent of process `pid` (field 4 of its stat file).
    static func parent(of pid: Int32) -> Int32? { parent(of: "/proc/\(pid)/stat") }

    private static func parent(of statPath: String) -> Int32? {
        guard let stat = try? String(contentsOfFile: statPath, encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    /// The CPU seconds of the entries of `directory` (`/proc` or a process's `task`) whose
    /// `comm` is `name`.
    private static func total(under directory: String, named name: String, withExitedChildren: Bool = false) -> Double? {
        guard let ids = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        var total: Double?
        for id in ids where id.allSatisfy(\.isNumber) {
            guard let comm = try? String(contentsOfFile: "\(directory)/\(id)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .newlines) == name,
                  let seconds = times(statPath: "\(directory)/\(id)/stat", withExitedChildren: withExitedChildren)
            else { continue }
            total = (total ?? 0) + seconds
        }
        return total
    }

    private static func times(statPath: String, withExitedChildren: Bool = false) -> Double? {
        guard let stat = try? String(contentsOfFile: statPath, encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields 14 and 15 of the file (utime, stime) are the 12th and 13th after the name.
        guard fields.count > 14, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        // Fields 16 and 17 (cutime, cstime): the children this process has waited for.
        let children = withExitedChildren ? (Double(fields[13]) ?? 0) + (Double(fields[14]) ?? 0) : 0
        return (user + system + children) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
