import ArgumentParser
import Foundation
import PhotosCore
import PhotosModel

extension PhotosAdmin {
    struct Experiments: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add, list and stop flow experiments.",
            discussion: """
                An experiment varies one variation point of the purchase flow between its variants, \
                the first of which is the control: \(VariationPoint.described). At most one runs per point. \
                photos-admin report funnel --experiment NAME compares the variants.
                """,
            subcommands: [Add.self, List.self, Stop.self])

        func run() async throws { throw Self.missingSubcommand() }
    }
}

extension VariationPoint: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// An experiment as `experiments list --format json` prints it.
struct ExperimentOutput: Encodable {
    let name: String
    let point: String
    let variants: [Experiment.Variant]
    let control: String
    let running: Bool
    let kept: String?
    let startedAt: String
    let stoppedAt: String?

    init(_ listing: ExperimentListing) {
        name = listing.experiment.name
        point = listing.experiment.point.rawValue
        variants = listing.experiment.variants
        control = listing.experiment.control
        running = listing.experiment.running
        kept = listing.experiment.kept
        startedAt = listing.startedAt
        stoppedAt = listing.stoppedAt
    }

    /// What new purchase flows get: the split while it runs, else the kept variant or the control.
    var state: String {
        running ? "running" : "stopped: new flows get \(kept ?? control)"
    }
}

extension PhotosAdmin.Experiments {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start an experiment on a variation point.",
            discussion: "Example: photos-admin experiments add sheet-buy --point buy.presentation --variants push:50,modal:50")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The experiment's name (letters, digits, '.', '_', '-').") var name: String
        @Option(help: "The variation point: \(VariationPoint.allValueStrings.joined(separator: ", ")).") var point: VariationPoint
        @Option(help: "VALUE:WEIGHT,… — values of the point, the control first (e.g. push:50,modal:50).") var variants: String

        func validate() throws {
            guard Experiment.isValidName(name) else {
                throw ValidationError("an experiment's name is 1 to 64 letters, digits, '.', '_' or '-'")
            }
            do { _ = try Experiment.parseVariants(variants, for: point) } catch let error as PhotosError { throw ValidationError(error.message) }
        }

        func run() async throws {
            let parsed = try Experiment.parseVariants(variants, for: point)
            let added = try await global.withServices { try await $0.experiments.add(name: name, point: point, variants: parsed, actor: $0.actor) }
            switch output.format {
            case .table:
                print("started experiment \(added.experiment.name) on \(added.experiment.point.rawValue): \(ExperimentService.variantsText(added.experiment.variants)) (control \(added.experiment.control))")
            case .json: try Output.json(ExperimentOutput(added))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the experiments, the newest first.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let experiments = try await global.withServices { try await $0.experiments.list() }.map(ExperimentOutput.init)
            switch output.format {
            case .table:
                Output.table(["NAME", "POINT", "VARIANTS", "STATE", "STARTED", "STOPPED"], experiments.map {
                    [$0.name, $0.point, ExperimentService.variantsText($0.variants), $0.state, $0.startedAt, $0.stoppedAt ?? "-"]
                })
            case .json: try Output.json(Page(name: "experiments", items: experiments))
            }
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop an experiment: new purchase flows get the control, or --keep VARIANT (a rollout).",
            discussion: "Flows that took a variant keep it until they end. Example: photos-admin experiments stop sheet-buy --keep modal")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The experiment's name.") var name: String
        @Option(help: "The variant every new flow gets from now on (default: the control).") var keep: String?

        func run() async throws {
            let stopped = try await global.withServices { try await $0.experiments.stop(name: name, keep: keep, actor: $0.actor) }
            switch output.format {
            case .table: print("stopped experiment \(stopped.experiment.name); new flows get \(stopped.experiment.kept ?? stopped.experiment.control)")
            case .json: try Output.json(ExperimentOutput(stopped))
            }
        }
    }
}
