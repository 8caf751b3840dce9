import DatabaseAccess
import CSQLite
import Foundation

extension Connection {
    /// Copies this database into a new file at `destination` with SQLite's online backup API.
    ///
    /// Safe while other connections read and write: the copy is one consistent snapshot.
    /// The copy is written next to `destination` and renamed into place only when complete, so
    /// a failed backup leaves no half-written file. Refuses to overwrite an existing file.
    public func backup(to destination: String) throws {
        guard let handle else { throw SQLiteError(resultCode: SQLITE_MISUSE, message: "connection is closed") }
        if FileManager.default.fileExists(atPath: destination) {
            throw SQLiteError(resultCode: SQLITE_CANTOPEN, message: "\(destination) already exists; choose a new path")
        }
        Self.removeAbandonedCopies(beside: destination)
        let temporary = destination + ".partial-\(getpid())"
        defer {
            try? FileManager.default.removeItem(atPath: temporary)
            try? FileManager.default.removeItem(atPath: temporary + "-journal")
        }
        let fd = open(temporary, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SQLiteError(resultCode: SQLITE_CANTOPEN, message: "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        _ = Foundation.close(fd)
        try copy(from: handle, into: temporary)
        guard rename(temporary, destination) == 0 else {
            throw SQLiteError(resultCode: SQLITE_CANTOPEN, message: "cannot move backup into \(destination): \(String(cString: strerror(errno)))")
        }
    }

    private func copy(from handle: OpaquePointer, into temporary: String) throws {
        var target: OpaquePointer?
        guard sqlite3_open_v2(temporary, &target, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let target else {
            let message = target.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(target)
            throw SQLiteError(resultCode: SQLITE_CANTOPEN, message: "\(temporary): \(message)")
        }
        defer { sqlite3_close_v2(target) }
        guard let backup = sqlite3_backup_init(target, "main", handle, "main") else {
            throw SQLiteError(resultCode: sqlite3_errcode(target), message: String(cString: sqlite3_errmsg(target)))
        }
        var code: Int32
        repeat {
            code = sqlite3_backup_step(backup, 256)
            if code == SQLITE_BUSY || code == SQLITE_LOCKED { usleep(10_000) }
        } while code == SQLITE_OK || code == SQLITE_BUSY || code == SQLITE_LOCKED
        sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            throw SQLiteError(resultCode: code, message: "backup failed: \(String(cString: sqlite3_errstr(code)))")
        }
    }

    /// Removes the copies a killed backup left in `destination`'s directory: `NAME.partial-PID`
    /// and its `-journal`, for a PID that no longer runs (a backup that ends, even in error,
    /// removes its own; only a kill leaves them, and they would stay for good).
    static func removeAbandonedCopies(beside destination: String) {
        let directory = (destination as NSString).deletingLastPathComponent
        let folder = directory.isEmpty ? "." : directory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            guard let match = name.wholeMatch(of: /.+\.partial-(\d+)(-journal)?/), let pid = Int32(match.1), pid > 0 else { continue }
            // kill(pid, 0): ESRCH when no such process runs (EPERM: it runs, as another user).
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
    }
}
