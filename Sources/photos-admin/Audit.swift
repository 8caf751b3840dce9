import ArgumentParser
import AuditTrail
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import Sessions

extension PhotosAdmin {
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read and verify the audit trail.",
            subcommands: [Show.self, Verify.self, Checkpoint.self, Key.self, Archive.self, Prove.self, CheckReceipt.self, Witness.self, Log.self],
            defaultSubcommand: Show.self)
    }
}

extension PhotosAdmin.Audit {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print audit rows, oldest first, a page at a time.",
            discussion: """
                A page cut by --limit is followed by a line on stderr naming the next page's --after (a seq with \
                --session, else a row id). --tail shows the newest rows instead of the oldest.
                Examples: photos-admin audit --tail --limit 20 · photos-admin audit --session ID --after 40
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Only this session (or the reserved ids 'operator' and 'api').") var session: String?
        @Option(parsing: .unconditional, help: "At most this many rows.") var limit = 1_000
        @Option(parsing: .unconditional, help: "Only rows after this cursor: a seq with --session, else a row id (a cut page names the next).")
        var after: Int64 = 0
        @Flag(help: "The newest rows (the last --limit of them), oldest first.") var tail = false
        @Flag(help: "Keep printing new rows as they are written (one JSON object per line with --format json), until interrupted.")
        var follow = false

        func validate() throws {
            guard (1...1_000_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 1000000") }
            guard after >= 0 else { throw ValidationError("--after must be 0 or more") }
            guard !(tail && after > 0) else { throw ValidationError("give --tail or --after, not both") }
            guard !(follow && (tail || after > 0)) else { throw ValidationError("--follow starts from the newest rows by itself; leave out --tail and --after") }
        }

        static let header = ["SESSION", "SEQ", "AT", "ACTOR", "USER", "COORDINATOR", "STEP", "SCREEN", "DETAIL"]

        static func cells(_ row: AuditRow) -> [String] {
            [row.sessionId, String(row.seq), row.at, row.actor, row.username ?? "-", row.coordinator ?? "-", row.step, row.screen ?? "-", row.detail]
        }

        func run() async throws {
            if follow { return try await runFollowing() }
            let page = try await global.withServices { context in
                try await DatabaseMaintenance.auditPage(context.database, sessionID: session, after: after, tail: tail, limit: limit)
            }
            let rows = page.rows
            if let next = page.nextAfter {
                Output.note("showing \(Output.count(limit, "row")); the next page: --after \(next)")
            }
            switch output.format {
            case .json: try Output.json(Page(name: "events", items: rows.map(AuditRowOutput.init), nextAfter: page.nextAfter))
            case .table: Output.table(Self.header, rows.map(Self.cells))
            }
        }

        /// Prints the newest `limit` rows, then polls for more every half second.
        private func runFollowing() async throws {
            try await global.withServices(migrate: false) { context in
                var lastID = max(0, try await DatabaseMaintenance.newestAuditRowID(context.database) - Int64(limit))
                // JSON output is one object per line and nothing else, so a pipe reader can parse every line.
                if output.format == .table { print(Self.header.joined(separator: "  ")) }
                while !Task.isCancelled {
                    let batch = try await DatabaseMaintenance.auditRows(context.database, afterID: lastID, sessionID: session)
                    for (id, row) in batch {
                        lastID = id
                        if output.format == .json {
                            try Output.jsonLine(AuditRowOutput(row: row))
                        } else {
                            print(Self.cells(row).joined(separator: "  "))
                        }
                    }
                    fflush(nil)  // all streams: a pipe reader sees each row at once
                    if batch.isEmpty { try await Task.sleep(for: .milliseconds(500)) }
                }
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every trail's hash chain and numbering, and the signed checkpoints.",
            discussion: """
                Checkpoint signatures are checked against --public-key (what `photos-admin audit key` \
                printed before any rotation: the first key), else the first key of the key history \
                (audit.signingKeyPath.history, kept by `audit key --rotate`), else the public half of the \
                signing key at audit.signingKeyPath; after a rotation checkpoint, against the key it names. \
                --against FILE (an exported checkpoint) also fails when the database no longer holds it.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The trusted public key, hex: the first one, if the key was rotated (photos-admin audit key prints it).") var publicKey: String?
        @Option(help: "An exported checkpoint (audit checkpoint --export) the database must still hold.") var against: String?
        @Option(help: "An archive (audit archive --to) to verify with the live rows as one history; repeat for each (all of them).")
        var archive: [String] = []

        func run() async throws {
            let archives = archive.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            let (result, trusted) = try await global.withServices(migrate: false) { context in
                let trusted = try AuditService.trustedKeyAndSource(explicit: publicKey, signingKeyPath: context.services.audit.signingKeyPath)
                let exported = try against.map { try AuditService.readExport(path: $0) }
                return (try await context.services.audit.verify(
                    publicKey: trusted?.key, against: exported, archives: archives, openArchive: AuditArchiveFiles.openForReading,
                    openScratch: AuditArchiveFiles.openScratch), trusted)
            }
            if let trusted, result.checkpointsChecked > 0 {
                print("trusted key: \(trusted.key.hex) (\(trusted.source))")
            }
            if let problem = result.problem {
                Output.note("audit verify FAILED after \(Output.count(result.rowsChecked, "row")) and \(Output.count(result.checkpointsChecked, "checkpoint")): \(problem)")
                throw PhotosAdmin.foundTampering
            }
            print("audit trail intact: \(Output.count(result.rowsChecked, "row")) verified, \(Output.count(result.checkpointsChecked, "checkpoint")) verified")
            if result.logLeavesChecked > 0 {
                print("transparency log: \(Output.count(result.logLeavesChecked, "leaf", plural: "leaves")) of live rows and every stored node verified, each checkpoint's tree and signed note too")
            }
            if !result.keyRotations.isEmpty {
                print("signing key rotated at \(result.keyRotations.count == 1 ? "checkpoint" : "checkpoints") \(result.keyRotations.map(String.init).joined(separator: ", ")): each rotation signed by the key before it")
            }
            if result.archivesChecked > 0 {
                print("archives: \(Output.count(result.archivesChecked, "archive")) verified with the live rows as one history (\(Output.count(result.archiveRowsChecked, "row")))")
                if !result.archivesWithUnsignedSessions.isEmpty {
                    print("archives \(result.archivesWithUnsignedSessions.map(String.init).joined(separator: ", ")) were written before 0.5 (statement v1): their sessions tables are not signed, only their rows and segments")
                }
            } else if result.archives > 0 {
                // Their statements and segments are verified; their rows, with --archive.
                print("archived: \(Output.count(result.archivedRows, "row")) in \(Output.count(result.archives, "archive")) (signed statements verified; give --archive FILE for each to verify their rows)")
            }
            if let number = result.archiveInProgress {
                print("archive \(number) is being written now: the trails it has moved so far are not verified yet")
            }
            if result.redactedRows > 0 {
                // Erased users: their rows are whole and verified, and show no name.
                print("redacted: \(Output.count(result.redactedRows, "entry", plural: "entries")) name an erased user"
                    + (result.redactedBeforeCommitments > 0
                        ? " (\(result.redactedBeforeCommitments) of them written before name commitments: their place in the chain is proven, not their content)" : ""))
            }
        }
    }

    struct Checkpoint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a signed checkpoint of the trails' heads now.",
            discussion: "With --export FILE, also write it as JSON to keep elsewhere; `audit verify --against FILE` checks the database still holds it.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "Also write the checkpoint to this file (must not exist).") var export: String?

        func validate() throws {
            if let export, FileManager.default.fileExists(atPath: export) { throw ValidationError("\(export) already exists; choose a new path") }
        }

        func run() async throws {
            let checkpoint = try await global.withServices { context in
                try await context.services.audit.checkpoint(always: true)
            }
            guard let checkpoint else { return }
            if let export {
                let data = try checkpoint.exportJSON
                try data.write(to: URL(fileURLWithPath: export), options: .withoutOverwriting)
            }
            print("checkpoint \(checkpoint.number): \(checkpoint.heads.count) trail\(checkpoint.heads.count == 1 ? "" : "s") changed, hash \(checkpoint.hash)")
        }
    }

    struct Key: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the public key that checks the checkpoints' signatures (creating the signing key if there is none), or rotate the key.",
            discussion: """
                --rotate makes a new signing key: a checkpoint signed by the current key names the new public key, \
                the current public key is appended to audit.signingKeyPath.history (whose first line is the key \
                `audit verify` trusts), and the new key replaces the file. photosd signs with it from its next \
                checkpoint, without a restart. Stopped midway, run it again: it finishes the rotation.
                """)

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Replace the signing key with a new one; later checkpoints are signed by it.") var rotate = false
        @Flag(help: "Print the key as a note verifier key (<origin>+<key id>+<base64>): what audit check-receipt and audit witness take.")
        var note = false

        func validate() throws {
            guard !(rotate && note) else { throw ValidationError("--rotate and --note go separately: rotate, then print the new key with --note") }
        }

        func run() async throws {
            if note {
                let verifier = try await global.withServices { context in
                    let key = try await context.services.audit.checkedSigningKey()
                    return try await key.noteVerifierKey(origin: context.services.audit.origin())
                }
                print(verifier)
                return
            }
            guard rotate else {
                // Through the database: a new key is not made for a database whose checkpoints another signed.
                let key = try await global.withServices { context in try await context.services.audit.checkedSigningKey() }
                print(key.publicKeyHex)
                return
            }
            let (rotation, history) = try await global.withServices { context in
                (try await context.services.audit.rotateKey(), context.services.audit.keyHistoryPath)
            }
            if rotation.finishedInterrupted {
                print("finished the rotation of checkpoint \(rotation.checkpoint): the signing key file now holds public key \(rotation.newPublicKey)")
            } else {
                print("rotated the audit signing key at checkpoint \(rotation.checkpoint) (signed by the old key): new public key \(rotation.newPublicKey)")
            }
            Output.note("the old public key \(rotation.oldPublicKey) is kept in \(history); audit verify --public-key takes the first key of that file")
        }
    }

    struct Archive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move old trails out of the database into an archive file.",
            discussion: """
                Moves the trails of sessions that ended before --before, and the rows of the reserved trails \
                ('operator', 'api') written before it, into a new SQLite file with the same audit_trail view and \
                a statement signed with the audit key. photosd may keep running. The rows leave the database \
                step by step as they reach the file; if the command is stopped, run it again: it finishes the \
                interrupted archive first (its file is FILE.partial until then).
                Keep every archive: `audit verify --archive FILE …` checks them with the live rows as one history.
                Example: photos-admin audit archive --before 2026-01-01 --to /var/lib/photosd/archive-2025.sqlite
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Move what ended (or, for the reserved trails, was written) before this time: YYYY-MM-DD or an ISO-8601 UTC time.")
        var before: String
        @Option(help: "The archive file to write (must not exist).") var to: String
        @Option(help: .hidden) var sessionsPerStep = 200
        @Option(help: .hidden) var rowsPerStep = 5_000

        func validate() throws {
            guard ISO8601Timestamp.parse(before) != nil else {
                throw ValidationError("--before must be a date like 2026-01-01 or a time like 2026-01-01T00:00:00Z")
            }
            guard sessionsPerStep > 0, rowsPerStep > 0 else { throw ValidationError("the step sizes must be 1 or more") }
        }

        func run() async throws {
            guard let cut = ISO8601Timestamp.parse(before) else { return }
            let path = URL(fileURLWithPath: to).standardizedFileURL.path
            let (sessionsPerStep, rowsPerStep) = (self.sessionsPerStep, self.rowsPerStep)
            let reports = try await global.withServices { context in
                try await context.services.audit.archive(before: cut, to: path, openFile: AuditArchiveFiles.openForWriting) { archiver in
                    archiver.sessionsPerStep = sessionsPerStep
                    archiver.rowsPerStep = rowsPerStep
                }
            }
            switch output.format {
            case .json: try Output.json(["archives": reports])
            case .table:
                for report in reports {
                    print("\(report.resumed ? "finished interrupted archive" : "archive") \(report.number): \(Output.count(report.rows, "row")) "
                        + "(\(Output.count(report.sessions, "ended session")), \(Output.count(report.segments, "trail segment"))) "
                        + "before \(report.before) moved to \(report.path)")
                    if !report.spaceReclaimed {
                        Output.note("the space the rows held was not given back now (readers kept the WAL busy): new rows reuse it; running the command again gives it back")
                    }
                }
            }
        }
    }
}
