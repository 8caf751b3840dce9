import ArgumentParser
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

        func validate() throws {
            guard (1...1_000_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 1000000") }
        }

        func run() async throws {
            let rows = try await global.withServices { context in
                try await context.database.read { connection in
                    try AuditLog.rows(sessionID: session, limit: limit, on: connection)
                }
            }
            switch output.format {
            case .json: try Output.json(rows)
            case .table:
                Output.table(
                    ["SESSION", "SEQ", "AT", "ACTOR", "USER", "COORDINATOR", "STEP", "SCREEN", "DETAIL"],
                    rows.map { [$0.sessionId, String($0.seq), $0.at, $0.actor, $0.username ?? "-", $0.coordinator ?? "-", $0.step, $0.screen ?? "-", $0.detail] })
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check the audit trail's hash chain and numbering.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let result = try await global.withServices(migrate: false) { context in
                try await context.database.read { try AuditLog.verify(on: $0) }
            }
            if let problem = result.problem {
                Output.note("audit verify FAILED after \(result.rowsChecked) rows: \(problem)")
                throw ExitCode.failure
            }
            print("audit trail intact: \(result.rowsChecked) rows verified")
        }
    }
}
