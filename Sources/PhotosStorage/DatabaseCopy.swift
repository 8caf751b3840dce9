import AuditTrail
import DatabaseAccess
import Foundation
import Logging
import PhotosCore
import PhotosModel
import PostgresStore

/// Copies a whole photos database into an empty one, of either kind: `photos-admin copy --to`.
/// SQLite to PostgreSQL is how a deployment grows past one machine; PostgreSQL to SQLite gives a
/// file to inspect or keep.
///
/// The source is read from one snapshot (it may keep serving `photosd` meanwhile) and the
/// target is written in one transaction, so a failure anywhere leaves the target as it was. The
/// two run at once, each on its store's own thread, rows passing between them a page at a time
/// through a small bounded `CopyChannel`: memory stays flat however long the audit trail is.
///
/// Rows keep their ids (the audit trail's checkpoints and funnel marks refer to them), so the
/// target's `audit verify` checks exactly what the source's would. Both databases must be at
/// this binary's migration; the target is migrated before the copy, the source is not touched.
public enum DatabaseCopy {
    /// How far the copy is: `copied` of `total` rows of `table` are written.
    public struct Progress: Sendable {
        /// The table being copied.
        public var table: String
        /// Its rows written so far.
        public var copied: Int
        /// Its rows in the source's snapshot.
        public var total: Int
    }

    /// What was copied, table by table, in copy order.
    public struct Summary: Sendable {
        /// Rows copied per table.
        public var rows: [(table: String, count: Int)]
    }

    /// One table to copy.
    struct Table: Sendable {
        /// Its name (in both dialects).
        let name: String
        /// Its primary key, which pages are read in the order of; empty for a one-row table.
        let key: [String]
        /// PostgreSQL: its `id` is an identity column, whose sequence must continue after the
        /// copied ids (SQLite's rowids do by themselves).
        let identity: Bool
        /// A one-row table a migration fills (its initial value): the source's row replaces it.
        var replacesMigrationRow: Bool { key.isEmpty }
    }

    /// Every table of the schema but `schema_migrations` (each database keeps its own), parents
    /// before the tables whose foreign keys name them. A table missing here is refused (see
    /// `unknownTables`), so a migration that adds one cannot be silently left out of copies.
    static let tables: [Table] = [
        Table(name: "users", key: ["id"], identity: true),
        Table(name: "photos", key: ["id"], identity: true),
        Table(name: "tokens", key: ["id"], identity: true),
        Table(name: "purchases", key: ["id"], identity: true),
        Table(name: "sessions", key: ["id"], identity: false),
        Table(name: "audit_events", key: ["id"], identity: true),
        Table(name: "audit_chain_cutover", key: [], identity: false),
        Table(name: "audit_redaction_bound", key: [], identity: false),
        Table(name: "audit_checkpoints", key: ["number"], identity: false),
        Table(name: "audit_cosignatures", key: ["checkpoint", "witness_key"], identity: false),
        Table(name: "audit_redactions", key: ["event_id"], identity: false),
        Table(name: "audit_archives", key: ["number"], identity: false),
        Table(name: "audit_archived_trails", key: ["trail", "first_seq"], identity: false),
        Table(name: "audit_log", key: [], identity: false),
        Table(name: "audit_log_leaf_runs", key: ["first_event_id"], identity: false),
        Table(name: "audit_log_tiles", key: ["idx"], identity: false),
        Table(name: "audit_log_nodes", key: ["level", "idx"], identity: false),
        Table(name: "idempotency_keys", key: ["session_id", "key"], identity: false),
        Table(name: "funnel_marks", key: ["day", "stage", "session_id"], identity: false),
        Table(name: "funnel_marks_progress", key: [], identity: false),
        Table(name: "sign_in_attempts", key: ["id"], identity: true),
        Table(name: "sign_in_trusted_addresses", key: ["username_key", "address"], identity: false),
        Table(name: "operators", key: ["id"], identity: true),
        Table(name: "console_sessions", key: ["id_hash"], identity: false),
        Table(name: "maintenance_leases", key: ["name"], identity: false),
        Table(name: "experiments", key: ["name"], identity: false),
    ]

    /// The bookkeeping table each database keeps for itself.
    static let migrationsTable = "schema_migrations"

    /// Copies the database `configuration` names into `target` (a SQLite file, created if it
    /// does not exist, or a `postgres://` URL), migrating the target first, then verifies the
    /// copy's audit trail as `photos-admin audit verify` would (with the configured signing
    /// key's public half, when there is one). A SQLite file this call created is removed again
    /// if the copy fails.
    public static func copy(
        _ configuration: PhotosConfiguration, to target: String, logger: Logger,
        progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws -> (summary: Summary, verification: AuditChains.Verification) {
        if try sameDatabase(configuration.databasePath, target) {
            throw PhotosError.badRequest("the source and the target are the same database; copy needs an empty second one")
        }
        let trustedKey = try AuditService.trustedKey(explicit: nil, signingKeyPath: configuration.resolvedAuditSigningKeyPath)
        let createdFile = !PostgresLocation.isURL(target) && !FileManager.default.fileExists(atPath: target)
        let source = try await PhotosDatabase.open(configuration, readerCount: 1, migrate: false, logger: logger)
        do {
            var targetConfiguration = configuration
            targetConfiguration.databasePath = target
            let destination = try await PhotosDatabase.open(targetConfiguration, readerCount: 1, migrate: true, create: .file, logger: logger)
            do {
                let summary = try await copy(from: source, to: destination, progress: progress)
                let verification = try await destination.read { try await AuditChains.verify(on: $0, publicKey: trustedKey) }
                await destination.close()
                await source.close()
                return (summary, verification)
            } catch {
                await destination.close()
                throw error
            }
        } catch {
            await source.close()
            if createdFile {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: target + suffix) }
            }
            throw error
        }
    }

    /// True when `first` and `second` name one database: the same file (after resolving links)
    /// or the same server, port and database name.
    static func sameDatabase(_ first: String, _ second: String) throws -> Bool {
        switch (PostgresLocation.isURL(first), PostgresLocation.isURL(second)) {
        case (true, true):
            let (a, b) = (try PostgresLocation(url: first), try PostgresLocation(url: second))
            return a.host == b.host && a.socketDirectory == b.socketDirectory && a.port == b.port && a.database == b.database
        case (false, false):
            func resolved(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
            return resolved(first) == resolved(second)
        default:
            return false
        }
    }

    /// Copies everything in `source` into `target`, which must be migrated and hold no rows,
    /// and returns how many rows of each table were copied. `pageSize` rows are read per query
    /// and handed over at a time. `progress` is called on the target's thread after each page.
    ///
    /// Throws `PhotosError.conflict` for a target that holds rows, `PhotosError.badRequest` for
    /// the same database twice or schemas that differ; then nothing is written.
    public static func copy(
        from source: any DatabaseStore, to target: any DatabaseStore, pageSize: Int = 1_000,
        progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws -> Summary {
        let channel = CopyChannel(capacity: 4)
        let pageSize = max(1, pageSize)
        async let reading: Void = source.read { connection in
            do {
                try await send(from: connection, into: channel, pageSize: pageSize)
            } catch {
                channel.fail(error)
                throw error
            }
        }
        let summary: Summary
        do {
            summary = try await target.write { connection in
                do {
                    return try await receive(into: connection, from: channel, target: "\(target)", progress: progress)
                } catch {
                    channel.fail(error)
                    throw error
                }
            }
        } catch {
            // The writer failed (or stopped on the reader's error, which it rethrows): the reader
            // has been told and returns at its next page.
            channel.fail(error)
            _ = try? await reading
            throw error
        }
        try await reading
        return summary
    }

    /// The source's side: each table's columns and row count, then its rows a page at a time,
    /// in key order, from the one snapshot of this read.
    static func send(from connection: any DatabaseConnection, into channel: CopyChannel, pageSize: Int) async throws {
        try channel.startSending()
        let unknown = try await unknownTables(on: connection)
        guard unknown.isEmpty else {
            throw PhotosError.badRequest("the source has tables this photos-admin does not know: \(unknown.joined(separator: ", "))")
        }
        for table in tables {
            let columns = try await connection.columnNames(of: table.name)
            let total = try await connection.queryOne("SELECT count(*) AS total FROM \(raw: quoted(table.name))")?.int("total") ?? 0
            try await channel.send(.table(table.name, columns: columns, total: total))
            let select: SQL = "SELECT \(raw: columns.map(quoted).joined(separator: ", ")) FROM \(raw: quoted(table.name))"
            guard !table.key.isEmpty else {
                try await channel.send(.rows(try await connection.query(select)))
                continue
            }
            let keyIndexes = try table.key.map { key in
                guard let index = columns.firstIndex(of: key) else {
                    throw PhotosError.badRequest("the source's table \(table.name) has no column \(key)")
                }
                return index
            }
            let order: SQL = " ORDER BY \(raw: table.key.map(quoted).joined(separator: ", ")) LIMIT \(pageSize)"
            // Keyset pages: each starts after the previous page's last key, so a page costs one
            // index range scan however deep into the table it is (OFFSET would rescan).
            let key = table.key.count == 1 ? quoted(table.key[0]) : "(" + table.key.map(quoted).joined(separator: ", ") + ")"
            var lastKey: [DatabaseValue]?
            while true {
                let rows = if let lastKey {
                    try await connection.query(select + " WHERE \(raw: key) > (\(list: lastKey))" + order)
                } else {
                    try await connection.query(select + order)
                }
                guard let last = rows.last else { break }
                try await channel.send(.rows(rows))
                if rows.count < pageSize { break }
                lastKey = keyIndexes.map { last.values[$0] }
            }
        }
        try await channel.send(.finished)
    }

    /// The target's side, in its one transaction: refuse a target with rows, then insert what
    /// the source sends, then move PostgreSQL's identity sequences past the copied ids.
    static func receive(
        into connection: any DatabaseConnection, from channel: CopyChannel, target: String,
        progress: (@Sendable (Progress) -> Void)?
    ) async throws -> Summary {
        // A store may run a failed transaction again (PostgreSQL retries a deadlock); what was
        // received is gone by then, so a second run refuses rather than copy part of the rows.
        try channel.startReceiving()
        // Nobody else writes these tables until the copy commits (readers may still read).
        try await connection.holdWriters(of: tables.map(\.name))
        let unknown = try await unknownTables(on: connection)
        guard unknown.isEmpty else {
            throw PhotosError.badRequest("the target \(target) has tables this photos-admin does not know: \(unknown.joined(separator: ", "))")
        }
        for table in tables where !table.replacesMigrationRow {
            if try await connection.queryOne("SELECT 1 FROM \(raw: quoted(table.name)) LIMIT 1") != nil {
                throw PhotosError(.conflict, "the target \(target) is not empty (\(table.name) has rows); copy fills only an empty database")
            }
        }
        var summary = Summary(rows: [])
        var current: (table: String, insert: BatchInsert, total: Int)?
        while true {
            switch try await channel.receive() {
            case .table(let name, let columns, let total):
                let targetColumns = try await connection.columnNames(of: name)
                guard Set(targetColumns) == Set(columns) else {
                    throw PhotosError.badRequest(
                        "table \(name) has columns (\(columns.joined(separator: ", "))) in the source but (\(targetColumns.joined(separator: ", "))) in the target")
                }
                if tables.first(where: { $0.name == name })?.replacesMigrationRow == true {
                    _ = try await connection.execute("DELETE FROM \(raw: quoted(name))")
                }
                current = (name, BatchInsert(table: name, columns: columns), total)
                summary.rows.append((name, 0))
                progress?(Progress(table: name, copied: 0, total: total))
            case .rows(let rows):
                guard let (name, insert, total) = current else { throw PhotosError(.internal, "rows arrived before their table") }
                try await insert.insert(rows, on: connection)
                summary.rows[summary.rows.count - 1].count += rows.count
                progress?(Progress(table: name, copied: summary.rows[summary.rows.count - 1].count, total: total))
            case .finished:
                try await connection.advanceIdentity(of: tables.filter(\.identity).map(\.name))
                return summary
            }
        }
    }

    /// Tables `connection`'s database has that `tables` does not list.
    static func unknownTables(on connection: any DatabaseConnection) async throws -> [String] {
        let known = Set(tables.map(\.name) + [migrationsTable])
        return try await connection.tableNames().filter { !known.contains($0) }
    }

    /// `name` as a quoted identifier; the names come from the schema, never from input.
    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}

/// Inserts rows into one table, many per statement.
struct BatchInsert {
    let table: String
    let columns: [String]

    /// At most this many bound values per statement: well within both SQLite's (32,766) and
    /// PostgreSQL's (65,535) limits.
    static let maximumArguments = 10_000

    func insert(_ rows: [Row], on connection: any DatabaseConnection) async throws {
        try await connection.insert(
            into: DatabaseCopy.quoted(table), columns: columns.map(DatabaseCopy.quoted).joined(separator: ", "),
            rows: rows.map { $0.values as [any DatabaseBindable] }, perStatement: max(1, Self.maximumArguments / max(1, columns.count)))
    }
}
