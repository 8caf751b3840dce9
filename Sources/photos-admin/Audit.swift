import ArgumentParser
import Foundation
import PhotosCore

extension PhotosAdmin {
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read and verify the audit trail.",
            subcommands: [Show.self, Verify.self],
            defaultSubcommand: Show.self)
    }
}

extension PhotosAdmin.Audit {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print audit rows, oldest first.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Only this session (or the reserved ids 'operator' and 'api').") var session: String?
        @Option(help: "At most this many rows.") var limit = 1_000
        @Flag(help: "Keep printing new rows as they are written (one JSON object per line with --format json), until interrupted.")
        var follow = false

        func validate() throws {
            guard (1...1_000_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 1000000") }
        }

        static let header = ["SESSION", "SEQ", "AT", "ACTOR", "USER", "COORDINATOR", "STEP", "SCREEN", "DETAIL"]

        static func cells(_ row: AuditRow) -> [String] {
            [row.sessionId, String(row.seq), row.at, row.actor, row.username ?? "-", row.coordinator ?? "-", row.step, row.screen ?? "-", row.detail]
        }

        func run() async throws {
            if follow { return try await runFollowing() }
            var rows = try await global.withServices { context in
                try await DatabaseMaintenance.auditRows(context.database, sessionID: session, limit: limit + 1)
            }
            if rows.count > limit {
                rows.removeLast()
                Output.note("showing the first \(limit) rows; more with --limit \(min(limit * 10, 1_000_000)) (or --follow)")
            }
            switch output.format {
            case .json: try Output.json(rows)
            case .table: Output.table(Self.header, rows.map(Self.cells))
            }
        }

        /// Prints the newest `limit` rows, then polls for more every half second.
        private func runFollowing() async throws {
            try await global.withServices(migrate: false) { context in
                var lastID = max(0, try await DatabaseMaintenance.newestAuditRowID(context.database) - Int64(limit))
                print(Self.header.joined(separator: "  "))
                while !Task.isCancelled {
                    let batch = try await DatabaseMaintenance.auditRows(context.database, afterID: lastID, sessionID: session)
                    for (id, row) in batch {
                        lastID = id
                        if output.format == .json {
                            try Output.jsonLine(row)
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
        static let configuration = CommandConfiguration(abstract: "Check the audit trail's hash chain and numbering.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let result = try await global.withServices(migrate: false) { context in
                try await DatabaseMaintenance.verifyAudit(context.database)
            }
            if let problem = result.problem {
                Output.note("audit verify FAILED after \(result.rowsChecked) rows: \(problem)")
                throw ExitCode.failure
            }
            print("audit trail intact: \(result.rowsChecked) rows verified")
        }
    }
}
