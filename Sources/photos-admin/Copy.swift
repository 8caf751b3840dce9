import ArgumentParser
import AuditTrail
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import PostgresStore

extension PhotosAdmin {
    struct Copy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the whole database into an empty one: a SQLite file or a postgres:// URL, either way.",
            discussion: """
                The source (--db, $PHOTOS_DB or the config file's path) is read from one snapshot and may \
                keep serving photosd meanwhile. The target is migrated, must hold no rows, and is written \
                in one transaction: if anything fails, it is left as it was (a file the copy created is \
                removed). Ids are kept, so the copy's audit trail verifies as the source's does; it is \
                verified at the end. SQLite to PostgreSQL is how a deployment moves to several instances.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The target: a SQLite file (new, or empty) or a postgres:// URL of an empty database.") var to: String

        func validate() throws {
            guard !to.isEmpty else { throw ValidationError("--to must not be empty") }
        }

        func run() async throws {
            let configuration = try await global.configuration()
            let onTerminal = isatty(STDERR_FILENO) == 1
            let shown = ProgressLine()
            let progress: (@Sendable (DatabaseCopy.Progress) -> Void)? = onTerminal ? { @Sendable progress in shown.show(progress) } : nil
            let (summary, verification) = try await DatabaseCopy.copy(configuration, to: to, logger: GlobalOptions.logger, progress: progress)
            if onTerminal { Output.progress("\r\u{1B}[K") }
            let counts = summary.rows.filter { $0.count > 0 }.map { "\($0.count) \($0.table)" }
            // A URL is shown without its password.
            let target = PostgresLocation.isURL(to) ? ((try? PostgresLocation(url: to))?.description ?? "the target") : to
            print("copied \(Output.count(summary.rows.reduce(0) { $0 + $1.count }, "row")) to \(target): \(counts.isEmpty ? "none" : counts.joined(separator: ", "))")
            if let problem = verification.problem {
                Output.note("audit verify FAILED on the copy after \(Output.count(verification.rowsChecked, "row")) and \(Output.count(verification.checkpointsChecked, "checkpoint")): \(problem)")
                throw PhotosAdmin.foundTampering
            }
            print("audit trail intact on the copy: \(Output.count(verification.rowsChecked, "row")) verified, \(Output.count(verification.checkpointsChecked, "checkpoint")) verified")
        }
    }
}

/// The copy's progress on a terminal: one line, redrawn at most ten times a second.
///
/// `@unchecked Sendable`: `lastShown` is touched only while `lock` is held.
private final class ProgressLine: @unchecked Sendable {
    private let lock = NSLock()
    private var lastShown = Date.distantPast

    func show(_ progress: DatabaseCopy.Progress) {
        lock.lock()
        defer { lock.unlock() }
        let now = Date()
        guard now.timeIntervalSince(lastShown) >= 0.1 || progress.copied == progress.total else { return }
        lastShown = now
        Output.progress("\r\u{1B}[Kcopying \(progress.table): \(progress.copied) of \(progress.total) rows")
    }
}
