import CFaultVFS
import CSQLite
import Foundation

/// A fault-injecting SQLite VFS registered under a unique name for one test: open a database
/// with `Connection.Options(vfs: vfs.name)` and it can lose power, fail writes and syncs, and
/// count them. Wraps `Tests/CFaultVFS`.
///
/// `@unchecked Sendable`: the C side guards all its state with its own mutex; `handle` itself
/// never changes after `init` and is freed only by `unregister()`.
public final class FaultVFS: @unchecked Sendable {
    /// The name to open databases with.
    public let name: String
    private let handle: OpaquePointer

    /// The operations a failure can be injected into.
    public enum Operation: Int32, Sendable {
        case write = 1
        case sync = 2
    }

    /// What a power cut does to unsynced writes.
    public enum CutMode: Int32, Sendable, CaseIterable {
        /// All are lost.
        case drop = 0
        /// A random prefix per file survives; the write in flight may leave a garbled sector.
        case tear = 1
    }

    /// Counters since registration.
    public struct Statistics: Sendable {
        public var opens: Int
        public var writes: Int
        public var bytesWritten: Int
        public var syncs: Int
        public var truncates: Int
        public var injectedFailures: Int
        /// Writes undone (lost or torn) by the power cut.
        public var writesLost: Int
        /// Writes not covered by a sync yet.
        public var unsyncedWrites: Int
    }

    /// Registers a new instance (not as the default VFS).
    public init() throws {
        name = "fault-" + UUID().uuidString
        guard let handle = faultvfs_register(name) else { throw POSIXError(.ENOMEM) }
        self.handle = handle
    }

    /// Unregisters it. Every connection using it must be closed first.
    public func unregister() { faultvfs_unregister(handle) }

    /// Fails the operation after `after` more of it succeeded, with `code`; once, or from then
    /// on with `persistent`.
    public func fail(_ operation: Operation, after: Int = 0, code: Int32, persistent: Bool = false) {
        faultvfs_fail(handle, operation.rawValue, Int64(after), code, persistent ? 1 : 0)
    }

    /// Stops failing.
    public func clearFailures() { faultvfs_clear_failures(handle) }

    /// Cuts the power now.
    public func powerCut(_ mode: CutMode, seed: UInt64) { faultvfs_power_cut(handle, mode.rawValue, seed) }

    /// Cuts the power inside the write or sync after `operations` more of them.
    public func powerCut(afterOperations operations: Int, mode: CutMode, seed: UInt64) {
        faultvfs_power_cut_after(handle, Int64(operations), mode.rawValue, seed)
    }

    /// True once the power is off.
    public var isOff: Bool { faultvfs_is_off(handle) != 0 }

    /// The counters now.
    public var statistics: Statistics {
        var raw = faultvfs_stats()
        faultvfs_get_stats(handle, &raw)
        return Statistics(
            opens: Int(raw.opens), writes: Int(raw.writes), bytesWritten: Int(raw.bytes_written), syncs: Int(raw.syncs),
            truncates: Int(raw.truncates), injectedFailures: Int(raw.injected_failures), writesLost: Int(raw.writes_lost),
            unsyncedWrites: Int(raw.unsynced_writes))
    }
}

/// SQLite's result codes the fault tests inject (the extended ones are macros Swift does not import).
public enum InjectedCode {
    public static let full: Int32 = SQLITE_FULL
    public static let ioerrWrite: Int32 = SQLITE_IOERR | (3 << 8)
    public static let ioerrFsync: Int32 = SQLITE_IOERR | (4 << 8)
}
