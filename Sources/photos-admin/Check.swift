import ArgumentParser
import PhotosCore
import SQLiteStore

extension PhotosAdmin {
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the database: SQLite integrity, migration state and the audit trail.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let configuration = try await global.configuration()
            let connection = try Connection(path: configuration.databasePath, mode: .readOnly)
            defer { connection.close() }
            var failures = 0
            let integrity = try connection.query("PRAGMA integrity_check").map { $0.string(0) }
            if integrity == ["ok"] {
                print("integrity: ok")
            } else {
                failures += 1
                print("integrity: FAILED: \(integrity.prefix(5).joined(separator: "; "))")
            }
            let status = try PhotosMigrations.migrator.status(connection)
            let pending = status.filter { $0.appliedAt == nil }
            if pending.isEmpty {
                print("migrations: \(status.count) applied, none pending")
            } else {
                failures += 1
                print("migrations: pending \(pending.map(\.name).joined(separator: ", ")) (run photos-admin migrate)")
            }
            if pending.count < status.count {
                let audit = try connection.transaction(.deferred) { try AuditLog.verify(on: connection) }
                if let problem = audit.problem {
                    failures += 1
                    print("audit: FAILED: \(problem)")
                } else {
                    print("audit: intact (\(audit.rowsChecked) rows)")
                }
            }
            if failures > 0 {
                Output.note("check failed: \(failures) problem\(failures == 1 ? "" : "s")")
                throw ExitCode.failure
            }
        }
    }
}
