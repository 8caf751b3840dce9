import DatabaseAccess
import Foundation
import PhotosModel

/// A named lease in `maintenance_leases`: who runs a job that one process at a time should run
/// (photosd's sweep, `photos-admin audit archive`). A holder takes the row when its `until` has
/// passed, and keeps it by moving `until` on.
public struct MaintenanceLease: Sendable {
    let database: any DatabaseStore
    /// The lease's name.
    public let name: String

    /// The lease `name` in `database`.
    public init(database: any DatabaseStore, name: String) {
        self.database = database
        self.name = name
    }

    /// Takes (or keeps) the lease for `holder` until `until`, if no other holder has it now;
    /// true when `holder` holds it.
    public func take(holder: String, now: Date, until: Date) async throws -> Bool {
        let nowText = ISO8601Timestamp.string(from: now)
        let name = self.name
        return try await database.write { connection in
            // The first taker ever makes the row (held by none: its time has passed).
            try await connection.execute(
                "INSERT INTO maintenance_leases (name, holder, until) VALUES (\(name), '', \("1970-01-01T00:00:00.000Z")) ON CONFLICT (name) DO NOTHING")
            return try await connection.execute(
                "UPDATE maintenance_leases SET holder = \(holder), until = \(ISO8601Timestamp.string(from: until)) WHERE name = \(name) AND (until < \(nowText) OR holder = \(holder))") == 1
        }
    }

    /// Who holds (or last held) the lease, if it was ever taken.
    public func holder() async throws -> String? {
        let name = self.name
        return try await database.read { try await $0.queryOne("SELECT holder FROM maintenance_leases WHERE name = \(name)")?.string("holder") }
    }

    /// Takes the lease from `previous` (a holder known to be gone) for `holder`; false when
    /// someone else took it meanwhile.
    public func take(holder: String, replacing previous: String, until: Date) async throws -> Bool {
        let name = self.name
        return try await database.write { connection in
            try await connection.execute(
                "UPDATE maintenance_leases SET holder = \(holder), until = \(ISO8601Timestamp.string(from: until)) WHERE name = \(name) AND holder = \(previous)") == 1
        }
    }

    /// Gives the lease up, if `holder` has it.
    public func release(holder: String) async throws {
        let name = self.name
        _ = try await database.write { connection in
            try await connection.execute(
                "UPDATE maintenance_leases SET until = \("1970-01-01T00:00:00.000Z") WHERE name = \(name) AND holder = \(holder)")
        }
    }

    /// Whether someone holds the lease `name` at `now`.
    public static func isHeld(_ name: String, now: Date, on connection: any DatabaseConnection) async throws -> Bool {
        try await connection.queryOne(
            "SELECT 1 FROM maintenance_leases WHERE name = \(name) AND until >= \(ISO8601Timestamp.string(from: now))") != nil
    }
}
