import ArgumentParser
import Foundation
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
                print("migrations pending: \(report.pendingMigrations.map(\.name).joined(separator: ", ")) (back it up with photos-admin backup, then run photos-admin migrate)")
                if report.migrations.contains(where: { $0.appliedAt != nil }) {
                    print("audit: not checked until the migrations are applied (this version reads the trail in its own schema)")
                }
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
            // The log extends the newest tree head the key signed (kept beside the key): a restored
            // backup or a promoted standby verifies by itself, and is still behind it.
            var forked = false
            if report.pendingMigrations.isEmpty, report.audit?.isIntact == true {
                let (fork, origin, path) = try await global.withServices(migrate: false) { context in
                    let audit = context.services.audit
                    let origin: Result<String, any Error>
                    do { origin = .success(try await audit.origin()) } catch { origin = .failure(error) }
                    return (try await audit.logFork(), origin, audit.signedHeadPath)
                }
                if let fork {
                    print("log: FAILED: \(fork)")
                    print("log: \(LogFork.waysOn)")
                    failures += 1
                    forked = true
                } else if FileManager.default.fileExists(atPath: path) {
                    print("log: extends the tree head the key signed (\(path))")
                } else {
                    print("log: no signed tree head at \(path) yet (written with the next checkpoint)")
                }
                switch origin {
                case .success(let name): print("log origin: \(name)")
                case .failure(let error):
                    print("log origin: FAILED: \(error)")
                    failures += 1
                }
            }
            if failures > 0 {
                Output.note("check failed: \(Output.count(failures, "problem"))")
                // The trail found tampered with is told apart (3) from the other problems (1).
                throw report.audit?.problem != nil || forked ? PhotosAdmin.foundTampering : ExitCode.failure
            }
        }
    }
}
