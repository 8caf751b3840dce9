import DatabaseAccess
import Foundation

/// What PostgreSQL does its own way, for services written against `DatabaseConnection`: its
/// writers run concurrently (several connections, several instances), so what SQLite's single
/// writer gives for free takes a lock here.
extension PostgresTransactionConnection {
    /// One `SELECT` taking each lock in order with `pg_advisory_xact_lock[_shared]` (a named
    /// key hashed with `hashtextextended`), held until the transaction ends.
    func hold(_ locks: [TransactionLock]) async throws {
        guard !locks.isEmpty else { return }
        let calls = locks.map { lock -> SQL in
            let function = lock.shared ? "pg_advisory_xact_lock_shared" : "pg_advisory_xact_lock"
            switch lock.key {
            case .number(let key): return "\(raw: function)(\(key))"
            case .name(let name): return "\(raw: function)(hashtextextended(\(name), 0))"
            }
        }
        try await execute("SELECT \(SQL.joined(calls))")
    }

    /// `LOCK TABLE … IN EXCLUSIVE MODE`: other writers wait, readers go on.
    func holdWriters(of tables: [String]) async throws {
        guard !tables.isEmpty else { return }
        try await execute("LOCK TABLE \(raw: tables.map(Self.quoted).joined(separator: ", ")) IN EXCLUSIVE MODE")
    }

    /// Moves each table's identity sequence to its largest `id` (an empty table's stays).
    func advanceIdentity(of tables: [String]) async throws {
        for table in tables {
            // setval with NULL (an empty table) changes nothing: the next id stays 1.
            _ = try await query("SELECT setval(pg_get_serial_sequence(\(table), 'id'), max(id)) FROM \(raw: Self.quoted(table))")
        }
    }

    /// `(column::jsonb #>> '{a,b}')`, in parentheses: `#>>` binds no tighter than `||`.
    func jsonText(_ column: String, path: [String]) -> SQL {
        SQL(raw: "(\(column)::jsonb #>> '{\(path.joined(separator: ","))}')")
    }

    /// True when the current schema has a table named `name`.
    func tableExists(_ name: String) async throws -> Bool {
        try await queryOne("SELECT 1 WHERE to_regclass(\(name)) IS NOT NULL") != nil
    }

    /// The current schema's tables, sorted.
    func tableNames() async throws -> [String] {
        try await query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
        ).map { try $0.string("table_name") }
    }

    /// The columns of table `name`, in their declared order.
    func columnNames(of name: String) async throws -> [String] {
        try await query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(name) ORDER BY ordinal_position"
        ).map { try $0.string("column_name") }
    }

    /// A table name in double quotes (names come from the code, never from input).
    static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
