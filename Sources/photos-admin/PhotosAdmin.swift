import Foundation
import ArgumentParser

/// `photos-admin`: the operator's command-line tool.
@main
struct PhotosAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photos-admin",
        abstract: "Operate a photosd database: migrate, seed photos, manage users, purchases and the audit trail.",
        discussion: """
            The database is --db PATH, else $PHOTOS_DB, else database.path from the config file \
            (config/photosd.json, $PHOTOSD_CONFIG or --config). Every change is audited with actor \
            operator:<login name>. Works while photosd runs on the same database.
            """,
        subcommands: [
            Migrate.self, Photos.self, Users.self, SignIn.self, SignOut.self, Purchase.self, Sessions.self,
            Audit.self, Backup.self, Check.self,
        ]
    )
}

extension PhotosAdmin {
    /// Runs the command. Unlike the default, a failure prints exactly one line on stderr
    /// (`photos-admin: …`) without the usage text, so scripts and operators see what went wrong.
    static func main() async {
        if CommandLine.arguments.count == 1 {
            Output.note("photos-admin: missing subcommand (migrate, photos, users, sign-in, sign-out, purchase, sessions, audit, backup, check); see photos-admin --help")
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help, --version: the full text, on stdout.
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            let text = message(for: error)
                .split(separator: "\n").first.map(String.init) ?? ""
            if !text.isEmpty {
                Output.note("photos-admin: \(text)")
            }
            Foundation.exit(code.rawValue)
        }
    }
}
