import ArgumentParser
import Navigation
import PhotosCore
import PhotosModel
import Sessions

extension PhotosAdmin {
    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in",
            abstract: "Sign a user in as the operator and print a bearer token (shown once).",
            discussion: "With --session, signs that live session in; a purchase flow waiting on sign-in resumes to buy.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The username.") var username: String
        @Option(help: "Sign this live session in.") var session: String?

        func run() async throws {
            let token = try await global.withServices { context -> String? in
                if let session {
                    let result = try await context.sessions.operatorSignIn(sessionID: session, username: username, actor: context.actor)
                    Output.note("session \(session) signed in as \(username); top screen: \(result.session.top?.screen.rawValue ?? "-")")
                    return result.token
                }
                guard let user = try await context.auth.user(named: username) else {
                    throw PhotosError.notFound("no user named \(username)")
                }
                return try await context.auth.signInWithoutPassword(user, actor: context.actor).1.token
            }
            if let token { print(token) }
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
