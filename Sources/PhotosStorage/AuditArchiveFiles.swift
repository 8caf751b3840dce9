import AuditTrail
import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import SQLiteStore

/// Opening archive files (`photos-admin audit archive`, `audit verify --archive`): SQLite files
/// whatever the live database's store.
public enum AuditArchiveFiles {
    /// Opens the archive being written at `path` (`create`: a new file with the archive's
    /// schema, made with `O_CREAT | O_EXCL | O_NOFOLLOW`, so that nothing there — a file, a link,
    /// even a dangling one — is followed or overwritten, and a directory that does not exist is
    /// said at once). Either way the path must be a regular file, not a link.
    @Sendable public static func openForWriting(_ path: String, create: Bool) throws -> any DatabaseConnection {
        if create {
            let descriptor = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                let reason = errno
                let directory = (path as NSString).deletingLastPathComponent
                switch reason {
                case EEXIST: throw PhotosError(.conflict, "\(path) already exists (or is a link); an archive never writes over anything")
                case ENOENT: throw PhotosError.badRequest("cannot write the archive \(path): the directory \(directory) does not exist")
                default: throw PhotosError.badRequest("cannot write the archive \(path): \(String(cString: strerror(reason)))")
                }
            }
            close(descriptor)
        }
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw PhotosError(.conflict, "\(path) is not a regular file (a link?): an archive is written only into a file of its own")
        }
        do {
            let connection = try Connection(path: path, mode: .readWrite)
            if create { try connection.executeScript(AuditArchiveFile.schema) }
            return connection
        } catch let error as SQLiteError {
            throw PhotosError.badRequest("cannot write the archive \(path): \(error.primaryDescription)")
        }
    }

    /// A private temporary SQLite database (SQLite's own: deleted when closed, spilled to disk
    /// past its cache), for what `audit verify` would otherwise hold in memory.
    @Sendable public static func openScratch() throws -> any DatabaseConnection {
        try Connection(path: "", mode: .readWrite)
    }

    /// Opens the archive at `path` read-only.
    @Sendable public static func openForReading(_ path: String) throws -> any DatabaseConnection {
        guard FileManager.default.fileExists(atPath: path) else {
            let partial = FileManager.default.fileExists(atPath: path + ".partial")
                ? " (\(path).partial is an archive whose move was interrupted: photos-admin audit archive finishes it)" : ""
            throw PhotosError.notFound("no archive at \(path)\(partial)")
        }
        do {
            let connection = try Connection(path: path, mode: .readOnly)
            guard try connection.tableExists("archive"), try connection.tableExists("audit_events") else {
                throw PhotosError.badRequest("\(path) is not an audit archive (photos-admin audit archive writes them)")
            }
            return connection
        } catch let error as SQLiteError {
            throw PhotosError.badRequest("\(path) is not an audit archive: \(error.primaryDescription)")
        }
    }
}
