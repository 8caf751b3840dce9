import ArgumentParser
import AuditTrail
import PhotosCore
import PhotosModel
import PhotosStorage
import SchemaMigrations
import Sessions

extension PhotosAdmin {
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the database: SQLite integrity, migration state and the audit trail (SQLite file or PostgreSQL).")

        @OptionGroup var global: GlobalOptions
        @Option(help: "The trusted public key for the audit checkpoints, hex (default: from audit.signingKeyPath).") var publicKey: String?

        func run() async throws {
            let configuration = try await global.configuration()
            let key = try AuditService.trustedKey(explicit: publicKey, signingKeyPath: configuration.resolvedAuditSigningKeyPath)
            let report = try await DatabaseMaintenance.check(configuration, publicKey: key, logger: GlobalOptions.logger)
            if report.integrity.isEmpty {
                print("integrity: not checked here (PostgreSQL: use the server's tools, e.g. amcheck)")
            } else if report.integrity == ["ok"] {
                print("integrity: ok")
            } else {
                print("integrity: FAILED: \(report.integrity.prefix(5).joined(separator: "; "))")
            }
            if report.pendingMigrations.isEmpty {
                print("migrations: \(report.migrations.count) applied, none pending")
            } else {
                print("migrations: pending \(report.pendingMigrations.map(\.name).joined(separator: ", ")) (run photos-admin migrate)")
            }
            if let audit = report.audit {
                if let problem = audit.problem {
                    print("audit: FAILED: \(problem)")
                } else {
                    print("audit: intact (\(Output.count(audit.rowsChecked, "row")))")
                }
            }
            var failures = report.problemCount
            // The signing key (what photosd will sign with) fits the checkpoints: a key restored
            // from a backup older than a rotation passes the rest and stops photosd's start.
            if report.pendingMigrations.isEmpty {
                let path = configuration.resolvedAuditSigningKeyPath
                switch try await global.withServices(migrate: false, { try await $0.services.audit.signingKeyFit() }) {
                case .fits:
                    print("signing key: fits (\(path))")
                case .missing(let needs?):
                    print("signing key: none at \(path): photosd needs the key with public key \(needs) there to start on this database")
                case .missing(nil):
                    print("signing key: none at \(path) yet (photosd makes it at its first start)")
                case .misfit(let why):
                    print("signing key: FAILED: \(why)")
                    failures += 1
                }
            }
            if failures > 0 {
                Output.note("check failed: \(Output.count(failures, "problem"))")
                // The trail found tampered with is told apart (3) from the other problems (1).
                throw report.audit?.problem != nil ? PhotosAdmin.foundTampering : ExitCode.failure
            }
        }
    }
}
