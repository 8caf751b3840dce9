import ArgumentParser
import AuditTrail
import Foundation
import Sessions

extension PhotosAdmin.Audit {
    struct Log: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage the transparency log itself.",
            subcommands: [Restart.self])
    }
}

extension PhotosAdmin.Audit.Log {
    struct Restart: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a new log over this database, under a new origin, after the old one cannot go on.",
            discussion: """
                The way on when `check` says the database's log does not extend the tree head the key signed \
                (a restored backup, a promoted standby that lost rows): the key never signs a tree that contradicts \
                one it signed, so the old log (its origin) ends where it was last signed. The new log's first \
                checkpoint, signed now, carries that head as the extension line `previous <old origin> <size> \
                <base64 root>`; the old log's notes and receipts stay checkable offline with the old verifier key. \
                Publish the new verifier key (`audit key --note`) and set audit.logOrigin to the new origin (or \
                leave it unset) on every instance.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The new log's origin: at most 200 bytes, no spaces, no '+' (a host name and a path, by convention).")
        var origin: String

        func validate() throws {
            guard !origin.isEmpty, origin.utf8.count <= 200, !origin.contains(where: { $0 == "+" || $0.isWhitespace }) else {
                throw ValidationError("--origin must be 1 to 200 bytes with no spaces and no '+' (it names the log's key)")
            }
        }

        func run() async throws {
            let (checkpoint, key) = try await global.withServices { context in
                let checkpoint = try await context.services.audit.restartLog(origin: origin)
                let key = try await context.services.audit.checkedSigningKey().noteVerifierKey(origin: origin)
                return (checkpoint, key)
            }
            let previous = checkpoint.note.flatMap { try? LogCheckpoint(parsing: SignedNote(parsing: $0).text) }?
                .extensions.first { $0.hasPrefix("previous ") }
            print("new log \(origin) started at checkpoint \(checkpoint.number) (size \(checkpoint.treeSize ?? 0))"
                + (previous.map { ", after the old log's \($0.dropFirst("previous ".count))" } ?? ""))
            print("verifier key: \(key)")
            Output.note("publish the new verifier key; receipts and witnesses of the old log keep the old one")
        }
    }
}
