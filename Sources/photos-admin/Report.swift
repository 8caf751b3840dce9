import ArgumentParser
import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel

extension PhotosAdmin {
    struct Report: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reports from the audit trail.",
            subcommands: [Funnel.self])

        func run() async throws { throw Self.missingSubcommand() }
    }
}

extension PhotosAdmin.Report {
    struct Funnel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The purchase funnel of the last days: each step's sessions, the conversion to the next, bars, then the buy flows' exits.",
            discussion: """
                From the purchase_funnel and buy_exits views (docs/analytics.md). --format json prints the views' rows; \
                --svg also writes the funnel as a chart. With --experiment NAME: that experiment's variants side by side \
                (sessions by their first exposure: exposed, reached buy, asked to sign in, signed in, purchased), the \
                conversion from exposure to purchase, and each variant's difference to the control with its 95 % interval.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(parsing: .unconditional, help: "How many days, ending with --until.") var days = 7
        @Option(help: "The last day, YYYY-MM-DD (UTC; default: today).") var until: String?
        @Option(help: "Also write the funnel as an SVG chart to this file.") var svg: String?
        @Option(help: "Compare the variants of this flow experiment (all its exposures; --days and --until do not apply).") var experiment: String?

        func validate() throws {
            guard (1...3_660).contains(days) else { throw ValidationError("--days must be between 1 and 3660") }
            if let until, Self.date(until) == nil { throw ValidationError("--until must be a date like 2026-11-22") }
        }

        /// A day as `--until` takes it (`ISO8601Timestamp.parse`, the one parser of times), at
        /// its midday: the same UTC date whatever the rounding.
        static func date(_ text: String) -> Date? {
            guard text.utf8.count == 10 else { return nil }
            return ISO8601Timestamp.parse(text)?.addingTimeInterval(12 * 3_600)
        }

        func run() async throws {
            if let experiment { return try await runExperiment(experiment) }
            let last = until.flatMap(Self.date) ?? Date()
            let report = try await global.withServices(migrate: false) { context in
                // Marks photosd has not added yet (it does every few seconds) are added first.
                try await FunnelMarks.catchUp(context.database)
                return try await context.database.read { try await FunnelReport.load(days: days, until: last, on: $0) }
            }
            if let svg {
                // A file that cannot be written is a failure of the command (exit 1), not of its usage.
                try Data(FunnelChart.svg(report).utf8).write(to: URL(fileURLWithPath: svg))
            }
            switch output.format {
            case .json: try Output.json(report)
            case .table: print(FunnelChart.text(report, width: Output.terminalWidth))
            }
        }

        /// `--experiment NAME`: the variants compared.
        func runExperiment(_ name: String) async throws {
            let report = try await global.withServices(migrate: false) { context in
                try await context.database.read { try await ExperimentReport.load(experiment: name, on: $0) }
            }
            if let svg {
                try Data(ExperimentChart.svg(report).utf8).write(to: URL(fileURLWithPath: svg))
            }
            switch output.format {
            case .json: try Output.json(report)
            case .table: print(ExperimentChart.text(report))
            }
        }
    }
}
