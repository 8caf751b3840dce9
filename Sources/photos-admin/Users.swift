import ArgumentParser
import Foundation
import PhotosCore
import PhotosModel
import Sessions

extension PhotosAdmin {
    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add, list and erase users.", subcommands: [Add.self, List.self, Erase.self])

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

    struct Erase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget a user (right to erasure): their name, password hash, tokens and sign-in records.",
            discussion: """
                Their live sessions are signed out (audited), their purchases stay (pointing at user id only), and \
                the audit trail keeps every step but shows no name: `audit verify` still passes and counts the \
                redacted entries. The erasure is a `user.erased` step (user id, when, by whom; no name). On SQLite \
                the name's bytes leave the database file and its WAL before this returns; on PostgreSQL the \
                touched tables are vacuumed. Backups made before keep the name (docs/reliability.md).
                Example: photos-admin users erase alice --yes
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The username.") var username: String
        @Flag(help: "Really erase (without it, nothing is done).") var yes = false

        func validate() throws {
            try AuthService.validate(username: username)
            guard yes else {
                throw ValidationError(
                    "erasing \(username) signs out their sessions, deletes their name, password hash, tokens and sign-in records, and removes the name from the audit trail; it cannot be undone: add --yes")
            }
        }

        func run() async throws {
            let report = try await global.withServices { context in
                try await context.sessions.erase(username: username, actor: context.actor)
            }
            switch output.format {
            case .json: try Output.json(report)
            case .table:
                print("erased user \(report.userId) (their name is gone; purchases kept)")
                print("signed out \(Output.count(report.sessionsSignedOut, "session"))")
                print("deleted \(Output.count(report.tokensDeleted, "token")), \(Output.count(report.signInRowsDeleted, "sign-in record")), \(Output.count(report.answersDeleted, "stored answer"))")
                print("redacted \(Output.count(report.auditRowsRedacted, "audit row")) written before name commitments")
            }
        }
    }
}
