import Foundation
import PhotosModel

/// A small secret kept in a file of its own, outside the database (the server secret, the
/// audit signing key): created with mode 0600 on first use, refused when others may read it or
/// when it does not hold exactly the bytes expected. Its contents are never logged.
public enum SecretFile {
    /// The `count` bytes in `path`; if the file does not exist, `make()` is written there first
    /// (mode 0600, fsynced). `what` names the secret in errors.
    public static func loadOrCreate(path: String, what: String, count: Int, make: () -> [UInt8]) throws -> [UInt8] {
        if FileManager.default.fileExists(atPath: path) { return try load(path: path, what: what, count: count) }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        // Written whole to a file of its own, then linked into place: `link` fails if `path`
        // exists (as O_EXCL would), and nobody — another process, or a test beside this one —
        // ever sees the secret's file empty or half written.
        let temporary = path + ".new-" + UUID().uuidString
        let created = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard created >= 0 else {
            throw PhotosError.badRequest("cannot create the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { unlink(temporary) }
        let bytes = make()
        let written = bytes.withUnsafeBytes { write(created, $0.baseAddress, $0.count) }
        let synced = fsync(created) == 0
        close(created)
        guard written == bytes.count, synced else { throw PhotosError.badRequest("cannot write the \(what) \(path)") }
        if link(temporary, path) != 0, errno != EEXIST {
            throw PhotosError.badRequest("cannot create the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        return try load(path: path, what: what, count: count)
    }

    /// The `count` bytes in `path`, which must exist.
    public static func load(path: String, what: String, count: Int) throws -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else { throw PhotosError.notFound("no \(what) at \(path)") }
        guard info.st_mode & 0o077 == 0 else {
            throw PhotosError.badRequest("the \(what) \(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        // open and read rather than Foundation's `contents(atPath:)`, whose nil says nothing of
        // why: "Too many open files" is not a bad key, and the message must say which it is.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PhotosError.badRequest("cannot read the \(what) \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count + 1)
        let read = bytes.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
        guard read >= 0 else { throw PhotosError.badRequest("cannot read the \(what) \(path): \(String(cString: strerror(errno)))") }
        guard read == count else { throw PhotosError.badRequest("the \(what) \(path) holds \(info.st_size) bytes, not \(count)") }
        return Array(bytes.prefix(count))
    }
}
