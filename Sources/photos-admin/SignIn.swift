import ArgumentParser
import PhotosCore

extension PhotosAdmin {
    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in",
            abstract: "Sign a user in as the operator and print a bearer token (shown once).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The username.") var username: String

        func run() async throws {
            let token = try await global.withServices { context in
                guard let user = try await context.auth.user(named: username) else {
                    throw PhotosError.notFound("no user named \(username)")
                }
                return try await context.auth.signIn(user, actor: context.actor).1
            }
            print(token.token)
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-out",
            abstract: "Revoke every token of a user, or one token.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The username (revokes all their tokens).") var username: String?
        @Option(help: "Revoke just this token.") var token: String?

        func validate() throws {
            guard (username == nil) != (token == nil) else { throw ValidationError("give either USER or --token T") }
        }

        func run() async throws {
            try await global.withServices { context in
                if let token {
                    let user = try await context.auth.signOut(token: token, actor: context.actor)
                    print("revoked 1 token of \(user.username)")
                } else if let username {
                    let count = try await context.auth.signOut(username: username, actor: context.actor)
                    print("revoked \(count) token\(count == 1 ? "" : "s") of \(username)")
                }
            }
        }
    }
}
