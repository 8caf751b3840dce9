import ArgumentParser
import AuditTrail
import Foundation
import Hummingbird
import Logging
import PhotosListener
import PhotosModel
import SQLiteStore

extension PhotosAdmin.Audit.Witness {
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Be a C2SP tlog-witness: cosign the checkpoints of the logs given with --log that extend what it cosigned before.",
            discussion: """
                Answers POST /add-checkpoint as c2sp.org/tlog-witness says: 200 with its cosignature line \
                (cosignature/v1), 400 for a malformed request or an old size above the checkpoint's, 403 when no \
                trusted key signed it, 404 for a log not given with --log, 409 (text/x.tlog.size: the size it \
                cosigned) when the old size is not the one it cosigned or the same size has another root, 422 \
                when the consistency proof fails. --state (a SQLite file, made on first use) keeps one row per \
                log, moved forward by compare-and-set only: keep it, and never restore an older copy. Run it \
                for another shop (its log's note key with --log), and publish the key `audit witness key` prints.
                Example: photos-admin audit witness serve --listen 0.0.0.0:7380 --name witness.example/w1 --key-file /var/lib/witness/key --log "$SHOP_NOTE_KEY" --state /var/lib/witness/state.db
                """)

        @Option(help: "HOST:PORT to listen on (port 0: any free one, printed).") var listen: String
        @Option(help: "The witness's name, e.g. witness.example/w1: the name of its cosignatures.") var name: String
        @Option(help: "The witness's Ed25519 key (32 bytes, 0600; made on first use).") var keyFile: String
        @Option(help: "A log's note verifier key (audit key --note): the logs it witnesses. Repeat for each, and for each key of one log.")
        var log: [String]
        @Option(help: "The witness's state, a SQLite file (made on first use).") var state: String
        @Option(help: "The most connections at once.") var maxConnections = 64

        func validate() throws {
            guard !log.isEmpty else { throw ValidationError("--log is required: the note verifier key of a log to witness (audit key --note prints it)") }
            guard SignedNote.isKeyName(name) else { throw ValidationError("--name must be a key name: not empty, no spaces, no '+'") }
            guard (1...10_000).contains(maxConnections) else { throw ValidationError("--max-connections must be between 1 and 10000") }
            _ = try address()
        }

        func address() throws -> (host: String, port: Int) {
            guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port), colon != listen.startIndex else {
                throw ValidationError("--listen takes HOST:PORT, e.g. 127.0.0.1:7380")
            }
            return (String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
        }

        func run() async throws {
            let logs = try log.map { text in
                guard let key = SignedNote.VerifierKey(text) else { throw ValidationError("--log \(text.prefix(40)) is not a note verifier key (audit key --note prints one)") }
                return key
            }
            let key = try AuditSigningKey.loadOrCreate(path: keyFile)
            let witness = try await TlogWitness(name: name, key: key, logs: logs, state: try Connection(path: state))
            let (host, port) = try address()
            let logger = {
                var logger = Logger(label: "photos-admin-witness")
                logger.logLevel = .notice
                return logger
            }()
            let router = Router(context: BasicRequestContext.self)
            router.on("/add-checkpoint", method: .post) { request, _ in
                let body = try await request.body.collect(upTo: 64 * 1_024)
                let answer = try await witness.addCheckpoint(String(decoding: body.readableBytesView, as: UTF8.self))
                if answer.status != 200 {
                    logger.notice("refused a checkpoint: \(answer.status) \(answer.body.trimmingCharacters(in: .newlines))")
                }
                return Response(
                    status: .init(code: answer.status), headers: [.contentType: answer.contentType],
                    body: .init(byteBuffer: ByteBuffer(string: answer.body)))
            }
            let cosigner = await witness.cosignerKey
            let app = Application(
                router: router,
                server: .guarded(ListenerLimits(
                    name: "witness", maxBodyBytes: 64 * 1_024, requestTimeoutSeconds: 10, idleTimeoutSeconds: 60, maxConnections: maxConnections)),
                configuration: .init(address: .hostname(host, port: port), serverName: "photos-admin-witness"),
                onServerRunning: { channel in
                    FileHandle.standardOutput.write(Data("witness \(cosigner) listening on \(host):\(channel.localAddress?.port ?? port)\n".utf8))
                },
                logger: logger)
            try await app.runService()
        }
    }

    struct Key: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the witness's cosigner key (<name>+<key id>+<base64 of 0x04 and the Ed25519 key>), making its key file on first use.",
            discussion: """
                What a log configures (audit.witnesses) and a receipt's holder checks with (check-receipt --witness).
                Example: photos-admin audit witness key --name witness.example/w1 --key-file /var/lib/witness/key
                """)

        @Option(help: "The witness's name.") var name: String
        @Option(help: "The witness's Ed25519 key (32 bytes, 0600; made on first use).") var keyFile: String

        func validate() throws {
            guard SignedNote.isKeyName(name) else { throw ValidationError("--name must be a key name: not empty, no spaces, no '+'") }
        }

        func run() async throws {
            let key = try AuditSigningKey.loadOrCreate(path: keyFile)
            print(key.cosignerKey(name: name))
        }
    }
}
