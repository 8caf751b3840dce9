import ArgumentParser
import AuditTrail
import PhotosBuildInfo
import PhotosModel
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PostgresStore
import SQLiteStore

/// `photos-admin`: the operator's command-line tool.
@main
struct PhotosAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photos-admin",
        abstract: "Operate a photosd database: migrate, seed photos, manage users, purchases and the audit trail.",
        discussion: """
            The database is --db PATH, else $PHOTOS_DB, else database.path from the config file \
            (--config, else $PHOTOSD_CONFIG, else config/photosd.json in the working directory, else \
            /etc/photosd/photosd.json, the service's: said when it is the one read). --db and --config may stand before \
            or after the subcommand. Every change is audited with actor operator:<login name>. \
            Works while photosd runs on the same database.
            """,
        version: PhotosBuild.versionLine,
        subcommands: [
            Migrate.self, Photos.self, Users.self, SignIn.self, SignOut.self, Purchase.self, Sessions.self,
            Audit.self, Report.self, Backup.self, Copy.self, Check.self, Operators.self, Experiments.self,
        ]
    )

    // Declared here too, so that `photos-admin --db x.db users list` parses: ArgumentParser
    // hands the same values to every command's `GlobalOptions`.
    @OptionGroup var global: GlobalOptions

    func run() async throws { throw Self.missingSubcommand() }

    /// Parses and runs like ArgumentParser's own `main()`, but a failure is exactly one line on
    /// stderr (`photos-admin: …`, without the usage text), which scripts and operators read
    /// more easily. ArgumentParser has no hook for that, so this is the whole difference.
    static func main() async {
        do {
            // Swift decodes arguments with U+FFFD for bytes that are not UTF-8: a title typed in
            // another encoding would be stored with "�" in it. Refuse such arguments instead.
            for index in 1..<Int(CommandLine.argc) {
                guard let argument = CommandLine.unsafeArgv[index] else { continue }
                let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: strlen(argument))
                if String(validating: bytes, as: UTF8.self) == nil {
                    throw ValidationError("argument \(index) is not valid UTF-8")
                }
            }
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            // A signature refused over a database the key did not sign, and a trail that cannot
            // be replayed (`sessions show --at` on an edited row), are found tampering (3).
            let code = error is LogFork || error is SessionReplay.ReplayError ? foundTampering : exitCode(for: error)
            if code == .success {
                print(fullMessage(for: error))  // --help, --version: the full text, on stdout
            } else if let line = operatorMessage(for: error).split(separator: "\n").first {
                Output.note("photos-admin: \(line)\(suggestion(for: String(line), arguments: Array(CommandLine.arguments.dropFirst())))")
            }
            Foundation.exit(code.rawValue)
        }
    }
}

extension PhotosAdmin {
    /// Exit status 3: the command ran and found the audit trail tampered with or broken (a
    /// bad row, a broken chain, a checkpoint that does not match), so monitoring can tell it
    /// from 1, a command that could not do its work (a missing file, a bad argument, a failed
    /// disk). 64 is a usage error (ArgumentParser's).
    static let foundTampering = ExitCode(3)

    /// The line an operator reads for `error`. A failure of the storage under the database
    /// (full disk, I/O error) says so plainly, and that nothing of the command was committed
    /// (every command writes in one transaction); the statement it hit is of no use to them.
    static func operatorMessage(for error: any Error) -> String {
        if let error = error as? PostgresStoreError {
            // It says what was under way (connecting to the URL, without its password) and why.
            return error.isStorageFailure ? "\(error); nothing of this command was committed" : "\(error)"
        }
        if let error = error as? any DatabaseFailure {
            if error.isStorageFailure {
                return "storage failure: \(error.failureSummary) (\(error.failureCode)); nothing of this command was committed"
            }
            // The database's reason, never its statement (SQL is of no use to an operator).
            return "the database refused the command: \(error.failureSummary) (\(error.failureCode)); nothing of this command was committed"
        }
        let bridged = error as NSError
        if bridged.domain == NSCocoaErrorDomain || bridged.domain == NSPOSIXErrorDomain {
            let path = (bridged.userInfo[NSFilePathErrorKey] as? String) ?? (bridged.userInfo[NSURLErrorKey] as? URL)?.path
            return [path, FileErrors.reason(error)].compactMap { $0 }.joined(separator: ": ")
        }
        return message(for: error)
    }
}

extension PhotosAdmin {
    /// For `Unexpected argument 'lst'` (or the first of several) after the subcommands `arguments` named so far: the
    /// nearest subcommand of that level (` (did you mean 'list'?)`), or when none is near, the
    /// level's subcommands; empty for any other error, or a command that takes no subcommand.
    static func suggestion(for line: String, arguments: [String]) -> String {
        guard let match = line.firstMatch(of: /^(?:Unexpected argument|\d+ unexpected arguments:) '([^']+)'/) else { return "" }
        let word = String(match.1)
        var level = configuration.subcommands
        for argument in arguments {
            if argument == word { break }
            guard let next = level.first(where: { $0._commandName == argument }) else { continue }
            level = next.configuration.subcommands
        }
        let names = level.map { $0._commandName }
        guard !names.isEmpty, !word.hasPrefix("-") else { return "" }
        if let nearest = Spelling.nearest(to: word, in: names) { return " (did you mean '\(nearest)'?)" }
        return " (the commands here: \(names.joined(separator: ", ")))"
    }
}

extension ParsableCommand {
    /// The error of a command that only groups subcommands, run without one: it names them.
    static func missingSubcommand() -> ValidationError {
        let names = configuration.subcommands.map { $0._commandName }
        let path = ([PhotosAdmin._commandName] + (self is PhotosAdmin.Type ? [] : [_commandName])).joined(separator: " ")
        return ValidationError("missing subcommand (\(names.joined(separator: ", "))); see \(path) --help")
    }
}
