import AuditTrail
import DatabaseAccess
import Foundation
import HummingbirdBcrypt
import PhotosModel

/// What an operator may do in the console.
public enum OperatorRole: String, Sendable, Codable, CaseIterable {
    /// Reads sessions, timelines, the audit trail and the funnel.
    case viewer
    /// Also acts on live sessions (signs one in, completes its purchase).
    case `operator`
}

/// An operator of the console: not a shop user, and never a client.
public struct Operator: Sendable, Codable, Equatable {
    public var id: Int64
    public var name: String
    public var role: OperatorRole
    public var createdAt: String
}

/// The console's operators (`photos-admin operators add|list|remove`): names, roles and
/// passwords stored as bcrypt hashes, as users' are. Removing an operator ends their console
/// sessions in the same transaction. Adding and removing are steps of the `operator` trail
/// (`operator.created`, `operator.removed`), by whoever did it.
public struct OperatorService: Sendable {
    let database: any DatabaseStore
    let bcryptCost: Int
    let offload: Offload
    let now: @Sendable () -> Date

    /// Creates the service; `bcryptCost` as for users (`auth.bcryptCost`).
    public init(database: any DatabaseStore, bcryptCost: Int = 12, offload: Offload = Offload(), now: @escaping @Sendable () -> Date = Date.init) {
        self.database = database
        self.bcryptCost = bcryptCost
        self.offload = offload
        self.now = now
    }

    /// Adds an operator, audited as `actor`'s. The name follows the usernames' rules and the
    /// password theirs. Throws `conflict` when the name is taken.
    public func add(name: String, role: OperatorRole, password: String, actor: AuditActor) async throws -> Operator {
        try AuthService.validate(username: name)
        try AuthService.validate(password: password)
        let cost = UInt8(clamping: bcryptCost)
        let hash = await offload.run { Bcrypt.hash(password, cost: cost) }
        let at = ISO8601Timestamp.string(from: now())
        return try await database.write { connection in
            do {
                guard let id = try await connection.queryOne(
                    "INSERT INTO operators (name, role, password_hash, created_at) VALUES (\(name), \(role.rawValue), \(hash), \(at)) RETURNING id")?.int64("id")
                else { throw PhotosError(.internal, "the new operator's id was not returned") }
                try await AuditChains.append(
                    [AuditEntry(actor: actor, step: .operatorCreated, detail: ["operator": .string(name), "role": .string(role.rawValue)])],
                    to: AuditTrails.operatorSession, at: at, on: connection)
                return Operator(id: id, name: name, role: role, createdAt: at)
            } catch let error as any DatabaseFailure where error.isUniqueViolation {
                throw PhotosError(.conflict, "operator \(name) already exists")
            }
        }
    }

    /// Every operator, by name.
    public func list() async throws -> [Operator] {
        try await database.read { connection in
            try await connection.query("SELECT id, name, role, created_at FROM operators ORDER BY name").map(Self.operator)
        }
    }

    /// Removes operator `name` and ends their console sessions (their live streams stop at their
    /// next poll), audited as `actor`'s; returns them and how many sessions ended. Throws `not_found`.
    public func remove(name: String, actor: AuditActor) async throws -> (removed: Operator, endedSessions: Int) {
        let at = ISO8601Timestamp.string(from: now())
        return try await database.write { connection in
            guard let found = try await connection.queryOne("SELECT id, name, role, created_at FROM operators WHERE name = \(name)").map(Self.operator) else {
                throw PhotosError.notFound("no operator \(name)")
            }
            let ended = try await connection.execute("DELETE FROM console_sessions WHERE operator_id = \(found.id)")
            try await connection.execute("DELETE FROM operators WHERE id = \(found.id)")
            try await AuditChains.append(
                [AuditEntry(actor: actor, step: .operatorRemoved, detail: ["operator": .string(found.name), "endedSessions": .int(Int64(ended))])],
                to: AuditTrails.operatorSession, at: at, on: connection)
            return (found, ended)
        }
    }

    static func `operator`(_ row: Row) throws -> Operator {
        let role = try row.string("role")
        guard let parsed = OperatorRole(rawValue: role) else { throw PhotosError(.internal, "operator \(try row.string("name")) has an unknown role") }
        return Operator(id: try row.int64("id"), name: try row.string("name"), role: parsed, createdAt: try row.string("created_at"))
    }
}
