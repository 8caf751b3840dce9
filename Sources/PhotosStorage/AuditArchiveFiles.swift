import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import SQLiteStore

/// Opening archive files (`photos-admin audit archive`, `audit verify --archive`): SQLite files
/// whatever the live database's store.
public enum AuditArchiveFiles {
    /// Opens the archive being written at `path` (`create`: a new file with the archive's
    /// schema, refused if the file exists).
    @Sendable public static func openForWriting(_ path: String, create: Bool) throws -> any DatabaseConnection {
        if create, FileManager.default.fileExists(atPath: path) {
            throw PhotosError(.conflict, "\(path) already exists")
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
