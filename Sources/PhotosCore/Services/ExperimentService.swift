import AuditTrail
import DatabaseAccess
import Foundation
import PhotosModel
import Synchronization

/// An experiment as `photos-admin experiments list` shows it.
public struct ExperimentListing: Sendable, Codable, Equatable {
    /// The experiment.
    public var experiment: Experiment
    /// When it was added.
    public var startedAt: String
    /// When it stopped (nil while it runs).
    public var stoppedAt: String?
}

/// Flow experiments (`photos-admin experiments add|list|stop`): which variation point each
/// varies and between which variants. At most one runs per point. Adding and stopping are steps
/// of the `operator` trail (`experiment.added`, `experiment.stopped`), by whoever did it.
public struct ExperimentService: Sendable {
    let database: any DatabaseStore
    let now: @Sendable () -> Date

    /// Creates the service.
    public init(database: any DatabaseStore, now: @escaping @Sendable () -> Date = Date.init) {
        self.database = database
        self.now = now
    }

    /// Starts an experiment on `point` between `variants` (the control first), audited as
    /// `actor`'s. Throws `bad_request` for a bad name, `conflict` when the name is taken or
    /// another experiment runs on the point.
    public func add(name: String, point: VariationPoint, variants: [Experiment.Variant], actor: AuditActor) async throws -> ExperimentListing {
        guard Experiment.isValidName(name) else {
            throw PhotosError.badRequest("an experiment's name is 1 to 64 letters, digits, '.', '_' or '-', not \"\(name.prefix(80))\"")
        }
        let experiment = Experiment(name: name, point: point, variants: variants)
        let at = ISO8601Timestamp.string(from: now())
        return try await database.write { connection in
            if try await connection.queryOne("SELECT 1 FROM experiments WHERE name = \(name)") != nil {
                throw PhotosError(.conflict, "experiment \(name) already exists (names are never reused: their exposures stay in the audit trail)")
            }
            if let running = try await connection.queryOne("SELECT name FROM experiments WHERE point = \(point.rawValue) AND running = 1")?.string("name") {
                throw PhotosError(.conflict, "experiment \(running) runs on \(point.rawValue); stop it first (photos-admin experiments stop \(running))")
            }
            do {
                try await connection.execute(
                    "INSERT INTO experiments (name, point, variants, running, kept, started_at, stopped_at) VALUES (\(name), \(point.rawValue), \(try Self.variantsJSON(variants)), 1, NULL, \(at), NULL)")
            } catch let error as any DatabaseFailure where error.isUniqueViolation {
                throw PhotosError(.conflict, "another experiment was added on \(point.rawValue) meanwhile")
            }
            try await AuditChains.append(
                [AuditEntry(actor: actor, step: .experimentAdded, detail: [
                    "experiment": .string(name), "point": .string(point.rawValue), "variants": .string(Self.variantsText(variants)),
                ])],
                to: AuditTrails.operatorSession, at: at, on: connection)
            return ExperimentListing(experiment: experiment, startedAt: at, stoppedAt: nil)
        }
    }

    /// Every experiment, the newest first.
    public func list() async throws -> [ExperimentListing] {
        try await database.read { connection in
            try await connection.query(Self.selectAll + " ORDER BY started_at DESC, name DESC").map(Self.listing)
        }
    }

    /// Stops experiment `name`: new purchase flows get `keep` (a rollout), else the control, and
    /// no exposure is recorded any more; flows that took a variant keep it. Audited as `actor`'s.
    /// Throws `not_found`, `conflict` when it stopped already, `bad_request` for a `keep` that is
    /// not one of its variants.
    public func stop(name: String, keep: String?, actor: AuditActor) async throws -> ExperimentListing {
        let at = ISO8601Timestamp.string(from: now())
        return try await database.write { connection in
            guard var found = try await connection.queryOne(Self.selectAll + " WHERE name = \(name)").map(Self.listing) else {
                throw PhotosError.notFound("no experiment \(name)")
            }
            guard found.experiment.running else {
                throw PhotosError(.conflict, "experiment \(name) stopped already, at \(found.stoppedAt ?? "?")")
            }
            if let keep, !found.experiment.variants.contains(where: { $0.name == keep }) {
                throw PhotosError.badRequest("\(keep) is not a variant of \(name) (\(found.experiment.variants.map(\.name).joined(separator: ", ")))")
            }
            try await connection.execute("UPDATE experiments SET running = 0, kept = \(keep), stopped_at = \(at) WHERE name = \(name)")
            var detail: JSONObject = ["experiment": .string(name), "point": .string(found.experiment.point.rawValue)]
            if let keep { detail["kept"] = .string(keep) }
            try await AuditChains.append([AuditEntry(actor: actor, step: .experimentStopped, detail: detail)], to: AuditTrails.operatorSession, at: at, on: connection)
            found.experiment.running = false
            found.experiment.kept = keep
            found.stoppedAt = at
            return found
        }
    }

    /// Per variation point, the experiment that governs new purchase flows: the one added last
    /// on it (running, or stopped with its kept variant or control), none where none was added.
    public func governing() async throws -> [VariationPoint: Experiment] {
        var governing: [VariationPoint: Experiment] = [:]
        for listing in try await list().reversed() { governing[listing.experiment.point] = listing.experiment }
        return governing
    }

    // MARK: Rows

    static let selectAll: SQL = "SELECT name, point, variants, running, kept, started_at, stopped_at FROM experiments"

    static func listing(_ row: Row) throws -> ExperimentListing {
        // Columns as `selectAll` names them.
        let name = try row.string("name")
        guard let point = VariationPoint(rawValue: try row.string("point")),
              let variants = try? JSONDecoder().decode([Experiment.Variant].self, from: Data(try row.string("variants").utf8))
        else { throw PhotosError(.internal, "experiment \(name) has an unreadable point or variants") }
        return ExperimentListing(
            experiment: Experiment(name: name, point: point, variants: variants, running: try row.int64("running") == 1, kept: try row.optionalString("kept")),
            startedAt: try row.string("started_at"), stoppedAt: try row.optionalString("stopped_at"))
    }

    static func variantsJSON(_ variants: [Experiment.Variant]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(variants), as: UTF8.self)
    }

    /// `push:50,modal:50`, as `--variants` takes it.
    public static func variantsText(_ variants: [Experiment.Variant]) -> String {
        variants.map { "\($0.name):\($0.weight)" }.joined(separator: ",")
    }
}

/// The experiments that govern new purchase flows, as one process holds them: read at most once
/// a second (`maxAge`), so a flow's start costs no read while nothing changes. Every instance
/// assigns a subject the same variant (the assignment is a hash); a stop or an addition reaches
/// an instance within `maxAge`.
public final class ExperimentRules: Sendable {
    private let service: ExperimentService
    private let maxAge: Duration
    private let held = Mutex<(rules: [VariationPoint: Experiment], readAt: ContinuousClock.Instant)?>(nil)

    /// Creates the holder over `database`.
    public init(database: any DatabaseStore, maxAge: Duration = .seconds(1)) {
        service = ExperimentService(database: database)
        self.maxAge = maxAge
    }

    /// The experiments governing new flows, at most `maxAge` old.
    public func current() async throws -> [VariationPoint: Experiment] {
        let now = ContinuousClock.now
        if let held = held.withLock({ $0 }), now - held.readAt < maxAge { return held.rules }
        let rules = try await service.governing()
        held.withLock { $0 = (rules, now) }
        return rules
    }
}
