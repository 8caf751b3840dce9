import ArgumentParser
import Foundation
import PhotosCore

extension PhotosAdmin {
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add and list users.", subcommands: [Add.self, List.self])
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
            let password = try readPassword()
            let user = try await global.withServices { context in
                try await context.auth.createUser(username: username, password: password, actor: context.actor)
            }
            print("added user \(user.id): \(user.username)")
        }

        private func readPassword() throws -> String {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            guard var password = String(data: data, encoding: .utf8) else { throw ValidationError("the password is not valid UTF-8") }
            if password.hasSuffix("\r\n") { password.removeLast(2) } else if password.hasSuffix("\n") { password.removeLast() }
            guard !password.isEmpty else { throw ValidationError("no password on standard input") }
            return password
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let users = try await global.withServices { try await $0.auth.listUsers() }
            switch output.format {
            case .json: try Output.json(users)
            case .table: Output.table(["ID", "USERNAME", "CREATED"], users.map { [String($0.id), $0.username, $0.createdAt] })
            }
        }
    }
}
