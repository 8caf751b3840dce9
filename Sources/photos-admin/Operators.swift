import ArgumentParser
import Foundation
import PhotosCore
import PhotosModel

extension PhotosAdmin {
    struct Operators: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add, list and remove the console's operators.",
            discussion: "Roles: viewer (reads) and operator (may also act on live sessions).",
            subcommands: [Add.self, List.self, Remove.self])

        func run() async throws { throw Self.missingSubcommand() }
    }
}

extension OperatorRole: ExpressibleByArgument {}

extension PhotosAdmin.Operators {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an operator; the password is read from standard input.",
            discussion: "Example: printf '%s' \"$PASSWORD\" | photos-admin operators add ops --role viewer --password-stdin")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The operator's name.") var name: String
        @Option(help: "viewer or operator.") var role: OperatorRole
        @Flag(help: "Read the password from standard input (required: passwords never go on the command line).")
        var passwordStdin = false

        func validate() throws {
            guard passwordStdin else { throw ValidationError("--password-stdin is required (pipe the password in)") }
            try AuthService.validate(username: name)
        }

        func run() async throws {
            let password = try PasswordInput.read()
            let added = try await global.withServices { try await $0.operators.add(name: name, role: role, password: password, actor: $0.actor) }
            print("added operator \(added.name) (\(added.role.rawValue))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the operators by name.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let operators = try await global.withServices { try await $0.operators.list() }
            switch output.format {
            case .table: Output.table(["NAME", "ROLE", "CREATED"], operators.map { [$0.name, $0.role.rawValue, $0.createdAt] })
            case .json: try Output.json(Page(name: "operators", items: operators))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an operator; their console sessions end at once.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The operator's name.") var name: String

        func run() async throws {
            let (removed, ended) = try await global.withServices { try await $0.operators.remove(name: name, actor: $0.actor) }
            print("removed operator \(removed.name); \(ended) console session\(ended == 1 ? "" : "s") ended")
        }
    }
}
