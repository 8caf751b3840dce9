import ArgumentParser
import AuditTrail
import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import SQLiteStore

extension PhotosBench {
    struct AuditTrail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "audit-trail",
            abstract: "Build a database with one audit trail of --rows rows (and a checkpoint every --checkpoint-every rows), for timing `photos-admin audit verify` and its memory.")

        @Option(help: "The database to create (must not exist).") var db: String
        @Option(help: "Rows in the one trail.") var rows = 1_000_000
        @Option(help: "Rows between checkpoints.") var checkpointEvery = 100_000
        @Option(help: "The signing key file (created if missing).") var signingKey: String

        func validate() throws {
            guard rows > 0, checkpointEvery > 0 else { throw ValidationError("--rows and --checkpoint-every must be positive") }
            guard !FileManager.default.fileExists(atPath: db) else { throw ValidationError("\(db) already exists") }
        }

        func run() async throws {
            let database = try PhotosDatabase.open(path: db, durability: .normal)
            defer { database.close() }
            let audit = AuditService(database: database, signingKeyPath: signingKey)
            let start = Date()
            var written = 0
            while written < rows {
                let count = min(10_000, rows - written)
                try await database.write { connection in
                    let trail = try await AuditTrailWriter(sessionID: "long-trail", on: connection)
                    for index in 0..<count {
                        trail.record(AuditEntry(actor: .client, coordinator: "app", step: .screenPush, screen: "photo", detail: ["photoId": .int(Int64(index % 100 + 1))]))
                    }
                    _ = try await trail.write(at: ISO8601Timestamp.now())
                }
                written += count
                if written % checkpointEvery < count || written == rows { try await audit.checkpoint() }
            }
            print("wrote \(written) rows in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        }
    }
}
