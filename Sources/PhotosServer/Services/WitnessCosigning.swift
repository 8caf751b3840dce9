import AsyncHTTPClient
import AuditTrail
import DatabaseAccess
import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import PhotosCore
import PhotosModel
import ServiceLifecycle

/// photosd as a C2SP tlog-witness log client: after each checkpoint (and every `retryInterval`,
/// for a witness that was down or a checkpoint written by photos-admin) each witness of
/// `audit.witnesses` is sent the newest checkpoint — `old <size>` (the witness's size as last
/// known), the consistency proof from there, the note — and the cosignature it answers with is
/// checked against its key and stored beside the checkpoint (`AuditCosignatures`).
///
/// Each witness has a task of its own and nothing waits for one: an action or a checkpoint's
/// signature never does; a slow witness delays only its own next cosignature, bounded by
/// `requestTimeout`. A 409 names the witness's size: the request is made again from it. A
/// refusal (400, 403, 404, 422, a witness that holds a larger tree than the log's) is one log
/// line per checkpoint refused, and `photosd_witness_cosigned_size{witness}` stops moving. A
/// witness that cannot be reached is said once and asked again every `retryInterval`.
final class WitnessCosigning: Service, Sendable {
    /// A configured witness with its parsed key.
    struct Witness: Sendable {
        var endpoint: WitnessEndpoint
        var key: CosignerKey
    }

    private let witnesses: [Witness]
    private let database: any DatabaseStore
    private let logger: Logger
    private let requestTimeout: Duration
    private let retryInterval: Duration
    private let wakeups: [AsyncStream<Void>.Continuation]
    private let streams: [AsyncStream<Void>]

    /// A client of `witnesses` over `database`'s log.
    init(witnesses: [WitnessEndpoint], database: any DatabaseStore, logger: Logger, requestTimeout: Duration = .seconds(10), retryInterval: Duration = .seconds(30)) throws {
        self.witnesses = try witnesses.map { Witness(endpoint: $0, key: try $0.cosignerKey) }
        self.database = database
        self.logger = logger
        self.requestTimeout = requestTimeout
        self.retryInterval = retryInterval
        var wakeups: [AsyncStream<Void>.Continuation] = []
        var streams: [AsyncStream<Void>] = []
        for _ in witnesses {
            // The newest wake-up only: a witness that is behind is sent the newest checkpoint.
            let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            continuation.yield()  // the first round at start
            streams.append(stream)
            wakeups.append(continuation)
        }
        self.wakeups = wakeups
        self.streams = streams
    }

    /// A checkpoint was written: every witness is asked for it now.
    func checkpointWritten() {
        for wakeup in wakeups { wakeup.yield() }
    }

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(Int64(requestTimeout.components.seconds)))
        configuration.redirectConfiguration = .disallow
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for (witness, stream) in zip(self.witnesses, self.streams) {
                    group.addTask { await self.follow(witness, wakeups: stream, http: http) }
                }
                group.addTask {
                    // Retries without a new checkpoint: a witness that was down, one written by photos-admin.
                    while (try? await Task.sleep(for: self.retryInterval)) != nil {
                        self.checkpointWritten()
                    }
                    for wakeup in self.wakeups { wakeup.finish() }
                }
            }
        }
        try? await http.shutdown()
    }

    /// What one witness's task knows between rounds.
    private struct Progress {
        /// The newest checkpoint it cosigned (from the database at start) and that tree's size.
        var cosigned: (checkpoint: Int64, size: Int64)?
        /// The witness's size as its last answer said (a 409's body or a cosignature).
        var witnessSize: Int64?
        /// The checkpoint it last refused: not asked again until there is a newer one.
        var refused: Int64?
        /// Whether the last request failed to reach it (said once, until it answers again).
        var unreachable = false
        /// After a failure to reach it, it is asked again only from then on (every
        /// `retryInterval`, not at every checkpoint).
        var quietUntil: ContinuousClock.Instant?
    }

    private func follow(_ witness: Witness, wakeups: AsyncStream<Void>, http: HTTPClient) async {
        let gauge = Gauge(label: "photosd_witness_cosigned_size", dimensions: [("witness", witness.endpoint.name)])
        var progress = Progress()
        for await _ in wakeups {
            if let quietUntil = progress.quietUntil, ContinuousClock.now < quietUntil { continue }
            do {
                if progress.cosigned == nil {
                    progress.cosigned = try await database.read { try await AuditCosignatures.newest(cosignedBy: witness.key, on: $0) }
                    gauge.record(progress.cosigned?.size ?? 0)
                }
                let answered = try await round(witness, progress: &progress, http: http)
                if answered, progress.unreachable {
                    progress.unreachable = false
                    progress.quietUntil = nil
                    logger.notice("witness \(witness.endpoint.name) answers again")
                }
                gauge.record(progress.cosigned?.size ?? 0)
            } catch is CancellationError {
                return
            } catch {
                // Connection refused, a timeout, the database busy: asked again after retryInterval.
                progress.quietUntil = ContinuousClock.now + retryInterval - .milliseconds(100)
                if !progress.unreachable {
                    progress.unreachable = true
                    logger.warning("witness \(witness.endpoint.name) at \(witness.endpoint.url) cannot be asked to cosign: \(error); asked again every \(retryInterval) until it answers")
                }
            }
        }
    }

    /// Brings `witness` to the newest checkpoint, if it is not there: at most three requests (a
    /// 409 names the size to start from; a second 409 may follow another instance's request).
    /// Returns whether the witness was asked (and answered): false when nothing was sent.
    private func round(_ witness: Witness, progress: inout Progress, http: HTTPClient) async throws -> Bool {
        guard let newest = try await database.read({ try await AuditCosignatures.newestSigned(on: $0) }) else { return false }
        if let cosigned = progress.cosigned, cosigned.checkpoint >= newest.number { return false }
        if progress.refused == newest.number { return false }
        var old = progress.witnessSize ?? progress.cosigned?.size ?? 0
        // Whether a request went out: a refusal decided from what the database says the witness
        // cosigned, before any request, says nothing of whether the witness can be reached.
        var asked = false
        for _ in 1...3 {
            if old > newest.size {
                refuse(witness, newest.number, progress: &progress, """
                    it holds a tree of \(old) leaves, larger than this log's newest checkpoint (\(newest.size)): the database is behind what the \
                    witness cosigned (a restored backup, a standby that lost rows?); nothing this log signs from here on is cosigned by it
                    """)
                return asked
            }
            let from = old
            let proof: [MerkleTree.Hash] = from == 0 || from == newest.size
                ? [] : try await database.read { try await AuditLogTree.consistencyProof(old: from, new: newest.size, on: $0) }
            var request = HTTPClientRequest(url: witness.endpoint.addCheckpointURL)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            request.body = .bytes(ByteBuffer(string: AddCheckpointRequest.body(oldSize: old, proof: proof, note: newest.note)))
            let response = try await http.execute(request, timeout: .seconds(Int64(requestTimeout.components.seconds)))
            asked = true
            let body = String(buffer: try await response.body.collect(upTo: 64 * 1024))
            switch response.status.code {
            case 200:
                guard let line = AddCheckpointRequest.cosignatureLines(in: body, of: witness.key).first else {
                    refuse(witness, newest.number, progress: &progress, "it answered 200 without a cosignature line of its key \(witness.key)")
                    return true
                }
                let at = ISO8601Timestamp.string(from: Date())
                if case .refused(let reason) = try await database.write({
                    try await AuditCosignatures.store(line, of: witness.key, checkpoint: newest.number, at: at, on: $0)
                }) {
                    refuse(witness, newest.number, progress: &progress, reason)
                    return true
                }
                progress.cosigned = (newest.number, newest.size)
                progress.witnessSize = newest.size
                logger.debug("witness \(witness.endpoint.name) cosigned checkpoint \(newest.number) (size \(newest.size))")
                return true
            case 409:
                guard let size = AddCheckpointRequest.conflictSize(in: body), size != old else {
                    refuse(witness, newest.number, progress: &progress, "409 without a size other than the one sent (\(old))")
                    return true
                }
                old = size
                progress.witnessSize = size
            default:
                let reason = body.split(separator: "\n").first.map { String($0.prefix(200)) } ?? ""
                refuse(witness, newest.number, progress: &progress, "HTTP \(response.status.code)\(reason.isEmpty ? "" : ": " + reason)")
                return true
            }
        }
        refuse(witness, newest.number, progress: &progress, "its size kept changing (409 three times)")
        return true
    }

    private func refuse(_ witness: Witness, _ checkpoint: Int64, progress: inout Progress, _ reason: String) {
        progress.refused = checkpoint
        // A refusal is not a conflict on the size: the next round starts from what is stored.
        progress.witnessSize = nil
        logger.error("witness \(witness.endpoint.name) refused to cosign checkpoint \(checkpoint): \(reason)")
    }
}
