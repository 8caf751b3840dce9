import AuditTrail
import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import SQLiteStore

/// The figures of one storage-only run.
struct StorageRunResult: Codable {
    var mode: String
    var durability: String
    var clients: Int
    var writes: Int
    var writesPerSecond: Double
    var commits: Int
    var meanBatch: Double
    /// CPU time of the writer thread per write (its SQL, the commit and the fsync call).
    var writerCPUMicrosPerWrite: Double?
}

/// The writer alone, no HTTP: concurrent clients each doing what one audited action does in
/// the database (read the session, save its new state, append two audit rows), with group
/// commit against one transaction per request.
enum StorageBenchmark {
    /// The mean time of one `fdatasync` of a small write on `directory`'s disk: what one
    /// durable commit costs at least, and so what group commit can save.
    static func fsyncMicros(directory: String, samples: Int = 200) -> Double {
        let path = directory + "/fsync-probe"
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
        guard fd >= 0 else { return 0 }
        defer {
            close(fd)
            unlink(path)
        }
        var byte: UInt8 = 1
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<samples {
            _ = pwrite(fd, &byte, 1, off_t(index * 4096))
            _ = fdatasync(fd)
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(samples) / 1_000
    }

    static func run(directory: String, durability: Connection.Synchronous, groupCommit: Bool, clients: Int, seconds: Double) async throws -> StorageRunResult {
        let path = directory + "/storage-\(durability.rawValue)-\(groupCommit ? "group" : "single").db"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let database = try PhotosDatabase.open(path: path, durability: durability, maxBatchSize: groupCommit ? 64 : 1)
        defer { database.close() }
        let state = String(repeating: "x", count: 600)
        for client in 0..<clients {
            try await database.write { connection in
                try await connection.execute(
                    "INSERT INTO sessions (id, version, state, created_at, updated_at) VALUES (\("bench-\(client)"), 1, \(state), \("2026-01-01T00:00:00.000Z"), \("2026-01-01T00:00:00.000Z"))")
            }
        }
        let before = database.writer.stats
        let writerBefore = ProcessCPU.seconds(pid: getpid(), threadNamed: "sqlite-writer")
        let start = Date()
        let deadline = start.addingTimeInterval(seconds)
        let writes = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<clients {
                group.addTask {
                    var count = 0
                    let id = "bench-\(client)"
                    while Date() < deadline {
                        try await database.write { connection in
                            let version = try await connection.queryOne("SELECT version, state FROM sessions WHERE id = \(id)")?.int("version") ?? 0
                            try await connection.execute("UPDATE sessions SET version = \(version + 1), state = \(state), updated_at = \(ISO8601Timestamp.now()) WHERE id = \(id)")
                            try await AuditChains.append([
                                AuditEntry(actor: .client, coordinator: "app", step: .action, detail: ["action": "selectPhoto", "photoId": 1]),
                                AuditEntry(actor: .client, coordinator: "app", step: .screenPush, screen: "photo", detail: ["photoId": 1]),
                            ], to: id, at: ISO8601Timestamp.now(), on: connection)
                        }
                        count += 1
                    }
                    return count
                }
            }
            var total = 0
            for try await count in group { total += count }
            return total
        }
        let elapsed = Date().timeIntervalSince(start)
        let after = database.writer.stats
        let writerAfter = ProcessCPU.seconds(pid: getpid(), threadNamed: "sqlite-writer")
        var writerMicros: Double?
        if let writerBefore, let writerAfter, writes > 0 { writerMicros = (writerAfter - writerBefore) / Double(writes) * 1_000_000 }
        let commits = after.commits - before.commits
        return StorageRunResult(
            mode: groupCommit ? "group commit" : "one transaction per request", durability: durability.rawValue,
            clients: clients, writes: writes, writesPerSecond: Double(writes) / elapsed,
            commits: commits, meanBatch: commits > 0 ? Double(after.requests - before.requests) / Double(commits) : 0,
            writerCPUMicrosPerWrite: writerMicros)
    }
}
