import ArgumentParser
import Foundation
import PhotosCore
import PhotosModel

extension PhotosAdmin {
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add and list users.", subcommands: [Add.self, List.self])

        func run() async throws { throw Self.missingSubcommand() }
    }
}

extension PhotosAdmin.Users {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user; the password is read from standard input.",
            discussion: "Example: printf '%s' \"$PASSWORD\" | photos-admin users add alice --password-stdin")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The username.") var username: String
        @Flag(help: "Read the password from standard input (required: passwords never go on the command line).")
        var passwordStdin = false

        func validate() throws {
            guard passwordStdin else { throw ValidationError("--password-stdin is required (pipe the password in)") }
            try AuthService.validate(username: username)
        }

        func run() async throws {
            let password = try PasswordInput.read()
            let user = try await global.withServices { context in
                try await context.auth.createUser(username: username, password: password, actor: context.actor)
            }
            print("added user \(user.id): \(user.username)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List users by id, a page at a time.",
            discussion: "When there are more, the table is followed by a line on stderr naming the next page's --after; JSON carries it as nextAfter (null on the last page).")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Option(parsing: .unconditional, help: "At most this many.") var limit = 100
        @Option(parsing: .unconditional, help: "Only users with a larger id (the previous page's nextAfter).") var after: Int64 = 0

        func validate() throws {
            guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 100000") }
            guard after >= 0 else { throw ValidationError("--after must be 0 or more") }
        }

        func run() async throws {
            let fetched = try await global.withServices { try await $0.auth.listUsers(limit: limit + 1, afterID: after) }
            try Page(name: "users", fetched: fetched, limit: limit, id: \.id).print(
                output.format, command: "users list", header: ["ID", "USERNAME", "CREATED"]
            ) { [String($0.id), $0.username, $0.createdAt] }
        }
    }
}
