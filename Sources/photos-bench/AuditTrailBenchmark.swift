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
            var checkpointing: TimeInterval = 0
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
                if written % checkpointEvery < count || written == rows {
                    let began = Date()
                    try await audit.checkpoint()
                    checkpointing += Date().timeIntervalSince(began)
                }
            }
            print("wrote \(written) rows in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
            // Each checkpoint makes the rows since the last one leaves of the transparency log.
            print(String(format: "checkpoints (leaves, nodes, root, signatures): %.1f s in all, %.2f µs per row", checkpointing, checkpointing * 1e6 / Double(written)))
        }
    }
}

extension PhotosBench {
    struct LogProofs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log-proofs",
            abstract: "Time inclusion and consistency proofs on a database's transparency log (build one with audit-trail), and print its size.")

        @Option(help: "The SQLite database (built by audit-trail).") var db: String
        @Option(help: "Proofs of each kind to time.") var proofs = 2_000

        func run() async throws {
            let database = try PhotosDatabase.open(path: db, durability: .normal)
            defer { database.close() }
            let (size, nodes, tiles) = try await database.read { connection in
                (try await AuditLogTree.head(on: connection).size,
                 try await connection.queryOne("SELECT count(*) AS nodes FROM audit_log_nodes")?.int64("nodes") ?? 0,
                 try await connection.queryOne("SELECT count(*) AS tiles FROM audit_log_tiles")?.int64("tiles") ?? 0)
            }
            guard size > 1 else { throw ValidationError("the log of \(db) has \(size) leaves: build one with photos-bench audit-trail") }
            var generator = SystemRandomNumberGenerator()
            func time(_ label: String, _ body: @escaping @Sendable () async throws -> Int) async throws {
                var micros: [Double] = []
                var hashes = 0
                for _ in 0..<proofs {
                    let began = ContinuousClock.now
                    hashes += try await body()
                    let elapsed = ContinuousClock.now - began
                    micros.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
                }
                micros.sort()
                let mean = micros.reduce(0, +) / Double(micros.count)
                print(String(
                    format: "%@: %d proofs, mean %.0f µs, p50 %.0f µs, p99 %.0f µs, %.1f hashes (%.0f bytes) each",
                    label, proofs, mean, micros[micros.count / 2], micros[micros.count * 99 / 100], Double(hashes) / Double(proofs), Double(hashes) * 32 / Double(proofs)))
            }
            print(
                "log: \(size) leaves in \(tiles) tiles, \(nodes) stored nodes above them (\(String(format: "%.4f", Double(nodes) / Double(size))) per leaf), "
                    + "\(String(format: "%.0f", Double(size + nodes) * 32 / 1_048_576)) MiB of hashes")
            let indexes = (0..<proofs).map { _ in Int64.random(in: 0..<size, using: &generator) }
            let pairs = (0..<proofs).map { _ in Int64.random(in: 1...size, using: &generator) }
            let next = Counter()
            try await time("inclusion (random leaf, whole tree)") {
                let index = indexes[next.take() % indexes.count]
                return try await database.read { try await AuditLogTree.inclusionProof(index: index, size: size, on: $0) }.count
            }
            let pair = Counter()
            try await time("consistency (random old size → whole tree)") {
                let old = pairs[pair.take() % pairs.count]
                return try await database.read { try await AuditLogTree.consistencyProof(old: old, new: size, on: $0) }.count
            }
        }

        /// A counter the timed closures share.
        final class Counter: @unchecked Sendable {
            // @unchecked: the proofs are timed one after another; no two closures run at once.
            private var value = 0
            func take() -> Int {
                defer { value += 1 }
                return value
            }
        }
    }
}
