import AuditTrail
import PhotosModel

/// Receipts served without costing anyone else: a receipt's bytes are kept while its session's
/// trail head and the log's newest checkpoint stay as they were (every client fetching one
/// receipt shares one build), receipts are built one at a time, and at most `maxWaiting` more
/// wait for their turn — beyond that, `429` with `Retry-After`.
///
/// A receipt of 1,000 rows takes tens of milliseconds of CPU to read and encode; six clients
/// fetching one without pause took both cores of the benchmark machine from a bystander
/// (docs/benchmarks.md, "Receipts").
actor ReceiptServing {
    /// Which receipt: the session and where its rows start (nil: the newest).
    struct Key: Hashable, Sendable {
        var sessionID: String
        var fromSeq: Int?
    }

    /// What a kept receipt depends on (`AuditService.receiptStamp`).
    typealias Stamp = AuditReceipts.Stamp

    /// A receipt's JSON, or the outcome that is not one (pending, not found, not intact).
    enum Served: Sendable {
        case receipt([UInt8])
        case other(AuditReceipts.Outcome)
    }

    private struct Kept {
        var stamp: Stamp
        var bytes: [UInt8]
        var used: UInt64
    }

    private var kept: [Key: Kept] = [:]
    private var keptBytes = 0
    private var uses: UInt64 = 0
    private var building: [Key: (stamp: Stamp?, task: Task<Served, any Error>)] = [:]
    private var running = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// Builds asked for and not yet running (waiting for their turn, or about to).
    private var queued = 0
    /// How many builds may wait for the one running.
    let maxWaiting: Int
    /// The most bytes of receipts kept (the least recently served go first).
    let maxKeptBytes: Int

    init(maxWaiting: Int = 16, maxKeptBytes: Int = 8 << 20) {
        self.maxWaiting = maxWaiting
        self.maxKeptBytes = maxKeptBytes
    }

    /// The receipt `key`: kept bytes when `stamp` is the one they were built at, else the
    /// build already running for it at that stamp, else `build` in its turn. A nil `stamp` (no
    /// session row to stamp it: an archived session) is never kept.
    func serve(_ key: Key, stamp: Stamp?, build: @escaping @Sendable () async throws -> Served) async throws -> Served {
        uses += 1
        if let stamp, let entry = kept[key], entry.stamp == stamp {
            kept[key]?.used = uses
            return .receipt(entry.bytes)
        }
        if let stamp, let inFlight = building[key], inFlight.stamp == stamp {
            return try await inFlight.task.value
        }
        guard queued < maxWaiting else {
            throw PhotosError.tooManyRequests("\(queued + 1) receipts are waiting to be prepared; ask again in a second", retryAfter: 1)
        }
        queued += 1
        let task = Task { try await self.inTurn(build) }
        building[key] = (stamp, task)
        let result = await task.result
        if building[key]?.task == task { building[key] = nil }
        let served = try result.get()
        if let stamp, case .receipt(let bytes) = served { keep(key, stamp: stamp, bytes: bytes) }
        return served
    }

    /// `build`, once no other build runs (first come, first served).
    private func inTurn(_ build: @Sendable () async throws -> Served) async throws -> Served {
        if running {
            await withCheckedContinuation { waiters.append($0) }
        } else {
            running = true
        }
        queued -= 1
        defer {
            // Hand the turn to the next waiting build, or give it up.
            if waiters.isEmpty { running = false } else { waiters.removeFirst().resume() }
        }
        return try await build()
    }

    private func keep(_ key: Key, stamp: Stamp, bytes: [UInt8]) {
        guard bytes.count <= maxKeptBytes else { return }
        if let old = kept[key] { keptBytes -= old.bytes.count }
        kept[key] = Kept(stamp: stamp, bytes: bytes, used: uses)
        keptBytes += bytes.count
        while keptBytes > maxKeptBytes, let oldest = kept.min(by: { $0.value.used < $1.value.used }) {
            keptBytes -= oldest.value.bytes.count
            kept[oldest.key] = nil
        }
    }

    /// How many receipts are kept (tests).
    var keptCount: Int { kept.count }
}
