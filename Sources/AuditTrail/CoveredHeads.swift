import DatabaseAccess
import Foundation

/// What the checkpoints signed about each trail — its newest signed head — while `AuditVerifier`
/// walks the trails: in memory, or, given a scratch database (`audit verify` gives one: SQLite's
/// private temporary file), on disk, so that verifying stays flat in memory however many trails
/// the checkpoints name (a million ended sessions are a million entries).
final class CoveredHeads {
    private var memory: [String: AuditVerifier.Covered] = [:]
    private let scratch: (any DatabaseConnection)?

    init(scratch: (any DatabaseConnection)?) async throws {
        self.scratch = scratch
        guard let scratch else { return }
        try await scratch.executeScript("""
            PRAGMA cache_size = -8000;
            CREATE TABLE covered (trail TEXT PRIMARY KEY, seq INTEGER NOT NULL, hash TEXT NOT NULL, checkpoint INTEGER NOT NULL) WITHOUT ROWID;
            """)
    }

    /// Many `set`s to come: one transaction of the scratch database until `endBatch`.
    func beginBatch() async throws {
        try await scratch?.execute("BEGIN")
    }

    func endBatch() async throws {
        try await scratch?.execute("COMMIT")
    }

    func set(_ trail: String, _ covered: AuditVerifier.Covered) async throws {
        guard let scratch else {
            memory[trail] = covered
            return
        }
        try await scratch.execute(
            "INSERT INTO covered (trail, seq, hash, checkpoint) VALUES (\(trail), \(covered.seq), \(covered.hash), \(covered.checkpoint)) ON CONFLICT (trail) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, checkpoint = excluded.checkpoint")
    }

    func get(_ trail: String) async throws -> AuditVerifier.Covered? {
        guard let scratch else { return memory[trail] }
        return try await scratch.queryOne("SELECT seq, hash, checkpoint FROM covered WHERE trail = \(trail)").map {
            AuditVerifier.Covered(seq: try $0.int("seq"), hash: try $0.string("hash"), checkpoint: try $0.int("checkpoint"))
        }
    }

    @discardableResult
    func remove(_ trail: String) async throws -> AuditVerifier.Covered? {
        guard let scratch else { return memory.removeValue(forKey: trail) }
        let found = try await get(trail)
        if found != nil { try await scratch.execute("DELETE FROM covered WHERE trail = \(trail)") }
        return found
    }

    /// The first trail left (in byte order), if any.
    func first() async throws -> (trail: String, covered: AuditVerifier.Covered)? {
        guard let scratch else {
            return memory.min(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).map { ($0.key, $0.value) }
        }
        return try await scratch.queryOne("SELECT trail, seq, hash, checkpoint FROM covered ORDER BY trail LIMIT 1").map {
            (try $0.string("trail"), AuditVerifier.Covered(seq: try $0.int("seq"), hash: try $0.string("hash"), checkpoint: try $0.int("checkpoint")))
        }
    }

    var isEmpty: Bool {
        get async throws { try await first() == nil }
    }
}
