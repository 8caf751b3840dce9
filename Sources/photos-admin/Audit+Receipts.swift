import ArgumentParser
import AuditTrail
import Foundation
import PhotosCore
import PhotosModel
import PhotosStorage
import Sessions
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension PhotosAdmin.Audit {
    struct Prove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a session's receipt: its audit rows, an inclusion proof of the newest, and the signed checkpoint.",
            discussion: """
                The receipt is what GET /v1/sessions/{id}/receipt answers, as JSON. A session whose newest row no \
                checkpoint has signed yet gets one first. With --archive, the session's rows are read from that \
                archive file (audit archive --to) and proven against this database's log, which keeps their leaves.
                Check it anywhere with: photos-admin audit check-receipt FILE --key NOTE_KEY (audit key --note prints the key).
                Example: photos-admin audit prove --session 7f3c… --out receipt.json
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "The session id.") var session: String
        @Option(help: "An archive file holding the session (audit archive --to).") var archive: String?
        @Option(help: "The first row's seq (default: the newest receipts.maxRows rows; a receipt from a later seq starts its chain at previousHash).")
        var fromSeq: Int?
        @Option(help: "Write the receipt to this file (default: standard output).") var out: String?

        func validate() throws {
            if let fromSeq, fromSeq < 1 { throw ValidationError("--from-seq must be at least 1") }
        }

        func run() async throws {
            if let archive, !FileManager.default.fileExists(atPath: archive) { throw ValidationError("\(archive): no such archive file") }
            let receipt = try await global.withServices { context in
                let audit = context.services.audit
                let range = AuditReceipts.Range(fromSeq: fromSeq, maxRows: context.configuration.receiptsMaxRows)
                do {
                    var rows: AuditReceipts.ArchivedRows?
                    if let archive {
                        rows = try await AuditReceipts.archivedRows(sessionID: session, range: range, archive: try AuditArchiveFiles.openForReading(archive))
                    }
                    for attempt in 1...2 {
                        let outcome = if let rows { try await audit.receipt(sessionID: session, archived: rows) } else { try await audit.receipt(sessionID: session, range: range) }
                        switch outcome {
                        case .receipt(let receipt): return receipt
                        case .notFound:
                            throw PhotosError.notFound(archive == nil
                                ? "session \(session) has no audit rows in this database (archived? give --archive FILE)"
                                : "session \(session) has no rows in \(archive ?? "")")
                        case .notIntact(let damage):
                            throw PhotosError(.conflict, "\(damage)")
                        case .pending where attempt == 1:
                            try await audit.checkpoint(always: true)
                        case .pending:
                            break
                        }
                    }
                } catch let past as AuditReceipts.PastTheEnd {
                    throw ValidationError("--from-seq: \(past)")
                }
                throw PhotosError(.conflict, "session \(session)'s newest row is not a leaf of the log yet (its archive was written before 0.5?)")
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data: Data = try encoder.encode(receipt) + Data("\n".utf8)
            if let out {
                try data.write(to: URL(fileURLWithPath: out), options: Data.WritingOptions.atomic)
                Output.note("wrote the receipt of session \(session) (\(Output.count(receipt.rows.count, "row")), leaf \(receipt.inclusion.logIndex) of \(receipt.inclusion.treeSize)) to \(out)")
            } else {
                FileHandle.standardOutput.write(data)
            }
        }
    }

    struct CheckReceipt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-receipt",
            abstract: "Check a receipt offline, with nothing but the file and the log's note key.",
            discussion: """
                Checks, in order: the file is one reading of JSON with no field beyond a receipt's (format), the \
                rows give their hashes (rows), the hashes chain from seq 1 — or from previousHash, for a receipt \
                that starts later — to the newest (chain), the newest row's leaf index is inside the proven tree \
                (leaf), the checkpoint is a tlog checkpoint of that size (checkpoint), the proof leads from the \
                leaf to its root (inclusion), and it is signed by the key (signature). The first that fails is \
                named, and the exit status is 3. Rows an erasure redacted are named: their place and hash are \
                proven, not their content. No database and \
                no network are used; docs/receipts.md is the same procedure, byte for byte.
                Example: photos-admin audit check-receipt receipt.json --key "$(photos-admin audit key --note)"
                """)

        @Argument(help: "The receipt (audit prove, or GET /v1/sessions/{id}/receipt).") var file: String
        @Option(help: "The log's note verifier key: <origin>+<key id>+<base64> (audit key --note); repeat for each key the log was signed with (before and after a rotation).")
        var key: [String]
        @Option(help: "A witness's cosigner key (audit witness key prints one): the checkpoint must carry its cosignature. Repeat for each.")
        var witness: [String] = []
        @Option(help: "How many of the --witness keys must have cosigned (default: all of them).") var quorum: Int?

        func validate() throws {
            guard !key.isEmpty else { throw ValidationError("--key is required: the log's note verifier key (audit key --note prints it)") }
            if let quorum, !(1...max(1, witness.count)).contains(quorum) || witness.isEmpty {
                throw ValidationError("--quorum must be between 1 and the number of --witness keys (\(witness.count))")
            }
        }

        func run() async throws {
            let witnesses = try witness.map { text in
                guard let cosigner = CosignerKey(text) else {
                    throw ValidationError("--witness is not a cosigner key (<name>+<8 hex digits>+<base64 of 0x04 and the Ed25519 key>; audit witness key prints one)")
                }
                return cosigner
            }
            let verifiers = try key.map { text in
                guard let verifier = SignedNote.VerifierKey(text) else {
                    throw ValidationError("--key is not a note verifier key (<origin>+<8 hex digits>+<base64 of 0x01 and the Ed25519 key>; audit key --note prints it)")
                }
                return verifier
            }
            // A file it cannot read is a command that could not do its work (1), not a usage error.
            guard let data = FileManager.default.contents(atPath: file) else { throw PhotosError.notFound("\(file): no such file") }
            do {
                // One reading only: a key twice or a field no check covers is refused (exit 3).
                let receipt = try AuditReceipt.decodeStrictly(data)
                let checked = try receipt.check(keys: verifiers, witnesses: witnesses, quorum: quorum ?? witnesses.count)
                let signer = (try? SignedNote(parsing: receipt.checkpoint)).flatMap { note in verifiers.first(where: note.isSigned(by:)) } ?? verifiers[0]
                let seqs = checked.rows == 1 ? "seq \(checked.firstSeq)" : "seq \(checked.firstSeq)–\(checked.firstSeq + checked.rows - 1)"
                let start = receipt.previousHash.map { " from previousHash \($0.prefix(16))…" } ?? ""
                print("receipt verified: session \(receipt.sessionId), \(Output.count(checked.rows, "row")) (\(seqs)) chained\(start) to leaf \(receipt.inclusion.logIndex) of the log \(checked.origin) at size \(checked.treeSize), signed by \(signer.name)+\(String(format: "%08x", signer.keyID))")
                for (cosigner, time) in receipt.cosigners(witnesses) {
                    print("cosigned by \(cosigner.name) at \(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: TimeInterval(time))))")
                }
                if !checked.redactedSeqs.isEmpty {
                    print("\(Output.count(checked.redacted, "row")) redacted by an erasure (seq \(checked.redactedSeqs.map(String.init).joined(separator: ", "))): their place and hash are proven, not their content")
                }
            } catch let problem as AuditReceipt.Problem {
                Output.note("receipt check FAILED at \(problem)")
                throw PhotosAdmin.foundTampering
            }
        }
    }

    struct Witness: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Watch a log (the monitor form, by default), or be a C2SP tlog-witness that cosigns its checkpoints (serve, key).",
            subcommands: [Monitor.self, Serve.self, Key.self],
            defaultSubcommand: Monitor.self)
    }
}

extension PhotosAdmin.Audit.Witness {
    struct Monitor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fetch the log's newest checkpoint, check it extends the one kept in --state, and keep it.",
            discussion: """
                What a monitor runs from cron: GET URL/v1/log/checkpoint, its signature checked with --key; then, \
                if --state holds an earlier checkpoint, GET URL/v1/log/consistency proves the new tree extends the \
                kept one. Only then is the new checkpoint written to --state (the first run keeps the first it sees). \
                Exit 3: the log's history was rewritten (a smaller tree, another root at the same size, or a \
                consistency proof that fails) — the kept checkpoint stays. Exit 1: the log could not be read.
                Example: photos-admin audit witness --state /var/lib/witness/photos.note --url https://photos.example --key "$KEY"
                """)

        @Option(help: "The file keeping the last checkpoint seen (created on the first run).") var state: String
        @Option(help: "The photosd API's base URL, e.g. https://photos.example.") var url: String
        @Option(help: "The log's note verifier key (audit key --note); repeat to trust several. A key a rotation names is followed from these.")
        var key: [String]

        func validate() throws {
            guard !key.isEmpty else { throw ValidationError("--key is required: the log's note verifier key (audit key --note prints it)") }
        }

        /// The file beside --state that keeps the keys learned by following rotations, one per line.
        var keysPath: String { state + ".keys" }

        func run() async throws {
            var trusted = try key.map { text in
                guard let verifier = SignedNote.VerifierKey(text) else {
                    throw ValidationError("--key is not a note verifier key (audit key --note prints it)")
                }
                return verifier
            }
            // Keys followed on an earlier run: kept, so that the chain is read once.
            let learned = ((try? String(contentsOfFile: keysPath, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { SignedNote.VerifierKey(String($0)) }
            trusted += learned.filter { !trusted.contains($0) }
            let base = url.hasSuffix("/") ? String(url.dropLast()) : url
            guard let checkpointURL = URL(string: base + "/v1/log/checkpoint"), checkpointURL.scheme?.hasPrefix("http") == true else {
                throw ValidationError("--url must be an http(s) URL")
            }
            let fetched = String(decoding: try await Self.get(checkpointURL), as: UTF8.self)
            let new: LogCheckpoint
            do {
                new = try Self.open(fetched, with: trusted, what: "the fetched checkpoint")
            } catch let notSigned as PhotosError {
                // Signed by a key the trusted ones do not know: a rotation, if the chain of the
                // log's rotation notes leads there from a trusted key.
                guard let rotationsURL = URL(string: base + "/v1/log/rotations") else { throw notSigned }
                let followed = try Self.follow(String(decoding: try await Self.get(rotationsURL), as: UTF8.self), from: trusted)
                guard !followed.isEmpty else {
                    // A checkpoint of this log (its origin is a trusted key's name) that no trusted
                    // key signed and no rotation leads to: forged. Another origin is another log
                    // (a wrong --key or --url): the checkpoint cannot be read as this one's (1).
                    if let note = try? SignedNote(parsing: fetched), let tree = try? LogCheckpoint(parsing: note.text),
                       trusted.contains(where: { $0.name == tree.origin }) {
                        Output.note("witness FAILED: the log's checkpoint at size \(tree.size) is not signed by its key \(trusted.filter { $0.name == tree.origin }.map(\.description).joined(separator: " or ")) and no rotation note leads to another: it is forged")
                        throw PhotosAdmin.foundTampering
                    }
                    throw notSigned
                }
                trusted += followed
                new = try Self.open(fetched, with: trusted, what: "the fetched checkpoint")
                let kept = (learned + followed).map(\.description).joined(separator: "\n") + "\n"
                try Self.keep(kept, at: keysPath)
                for key in followed { print("followed the log's key rotation to \(key) (kept in \(keysPath))") }
            }
            guard let keptText = try? String(contentsOfFile: state, encoding: .utf8) else {
                try Self.keep(fetched, at: state)
                print("kept the log's checkpoint at size \(new.size) (first run: nothing to compare with)")
                return
            }
            let kept = try Self.open(keptText, with: trusted, what: "the kept checkpoint in \(state)")
            if new.size < kept.size {
                Output.note("witness FAILED: the log's tree shrank from \(kept.size) to \(new.size) leaves: its history was rewritten")
                throw PhotosAdmin.foundTampering
            }
            if new.size == kept.size {
                guard new.root == kept.root else {
                    Output.note("witness FAILED: two roots for the tree of \(new.size) leaves: the log's history was rewritten")
                    throw PhotosAdmin.foundTampering
                }
            } else if kept.size > 0 {
                guard let proofURL = URL(string: base + "/v1/log/consistency?from=\(kept.size)&to=\(new.size)") else { throw ValidationError("--url is not usable") }
                let proof: Consistency
                do {
                    proof = try JSONDecoder().decode(Consistency.self, from: try await Self.get(proofURL))
                } catch let error as ValidationError {
                    throw error
                } catch {
                    throw PhotosError.badRequest("the consistency proof from \(proofURL) is not readable: \(error)")
                }
                let hashes = proof.hashes.compactMap { Data(base64Encoded: $0).flatMap(MerkleTree.Hash.init) }
                guard proof.from == kept.size, proof.to == new.size, hashes.count == proof.hashes.count,
                      MerkleTree.verifyConsistency(old: kept.size, new: new.size, oldRoot: kept.root, newRoot: new.root, proof: hashes) else {
                    Output.note("witness FAILED: the tree of \(new.size) leaves does not extend the kept tree of \(kept.size) (its consistency proof fails): the log's history was rewritten")
                    throw PhotosAdmin.foundTampering
                }
            }
            try Self.keep(fetched, at: state)
            print("the log's checkpoint at size \(new.size) extends the kept one at size \(kept.size); kept it")
        }

        /// The keys the rotation notes in `text` (`GET /v1/log/rotations`: notes, oldest first,
        /// a blank line between two) lead to from `trusted`: a note signed by a key already
        /// trusted whose `key` line names the next, and which that next key signed too.
        static func follow(_ text: String, from trusted: [SignedNote.VerifierKey]) throws -> [SignedNote.VerifierKey] {
            var known = trusted
            var followed: [SignedNote.VerifierKey] = []
            for encoded in RotationNotes.split(text) {
                guard let note = try? SignedNote(parsing: encoded), let body = try? LogCheckpoint(parsing: note.text), let next = body.nextKey else {
                    throw PhotosError.badRequest("the log's rotations hold a note that is not a rotation checkpoint")
                }
                guard known.contains(where: { $0.name == body.origin && note.isSigned(by: $0) }), next.name == body.origin, note.isSigned(by: next) else { continue }
                if !known.contains(next) {
                    known.append(next)
                    followed.append(next)
                }
            }
            return followed
        }

        struct Consistency: Decodable {
            let from: Int64
            let to: Int64
            let hashes: [String]
        }

        static func open(_ text: String, with keys: [SignedNote.VerifierKey], what: String) throws -> LogCheckpoint {
            guard let note = try? SignedNote(parsing: text), let tree = try? LogCheckpoint(parsing: note.text) else {
                throw PhotosError.badRequest("\(what) is not a signed checkpoint note")
            }
            guard keys.contains(where: { tree.origin == $0.name && note.isSigned(by: $0) }) else {
                throw PhotosError.badRequest(
                    "\(what) is not signed by the key \(keys.map { "\($0.name)+\(String(format: "%08x", $0.keyID))" }.joined(separator: " or "))")
            }
            return tree
        }

        static func get(_ url: URL) async throws -> Data {
            let (data, response): (Data, URLResponse)
            do {
                (data, response) = try await URLSession.shared.data(from: url)
            } catch {
                throw PhotosError(.unavailable, "cannot read \(url): \(error.localizedDescription)")
            }
            guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                throw PhotosError(.unavailable, "\(url) answered \(status): \(String(decoding: data.prefix(300), as: UTF8.self))")
            }
            return data
        }

        static func keep(_ text: String, at path: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        }
    }
}
