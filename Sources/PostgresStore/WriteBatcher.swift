import Synchronization

/// Group commit for writes that each make one round trip: while `maxLeaders` batches are under
/// way, the writes that arrive wait, and the next batch takes them together (up to `maxBatch`),
/// one round trip and one commit for all of them.
///
/// No thread and no task of its own: the caller whose write finds a leader's place free sends
/// (it *leads*) its write and those waiting, hands each its result, and then hands the lead to
/// the first write still waiting, which sends the next batch from its own task. Under light
/// load every write leads at once, alone: nothing waits that did not have to.
///
/// Two writes with the same `key` (a session) are never in flight at once: the later waits for
/// the earlier's batch to end, so a batch never holds two writes of one session and one
/// session's writes are sent in the order they came.
final class WriteBatcher<Input: Sendable, Output: Sendable>: Sendable {
    /// What a waiting write is resumed with: lead a batch (its own write and `others`), or
    /// its result.
    private enum Ticket: Sendable {
        case lead(others: [Waiter])
        case done(Result<Output, any Error>)
    }

    private struct Waiter: Sendable {
        let key: String
        let input: Input
        let continuation: CheckedContinuation<Ticket, Never>
    }

    private struct State {
        var queue: [Waiter] = []
        var leaders = 0
        /// The keys of the writes in the batches under way.
        var inFlight: Set<String> = []
        var batches = 0
        var largest = 0

        /// Takes the lead for a write of `key` if a place is free and no write of `key` is in
        /// flight: the waiting writes it sends with its own (up to `maxBatch` in all); nil if not.
        mutating func lead(_ key: String, maxLeaders: Int, maxBatch: Int) -> [Waiter]? {
            guard leaders < maxLeaders, !inFlight.contains(key) else { return nil }
            leaders += 1
            inFlight.insert(key)
            return take(upTo: maxBatch - 1)
        }

        /// Up to `limit` waiting writes whose keys are not in flight, oldest first, now in flight.
        mutating func take(upTo limit: Int) -> [Waiter] {
            guard limit > 0, !queue.isEmpty else { return [] }
            var taken: [Waiter] = []
            var kept: [Waiter] = []
            for waiter in queue {
                if taken.count < limit && !inFlight.contains(waiter.key) {
                    inFlight.insert(waiter.key)
                    taken.append(waiter)
                } else {
                    kept.append(waiter)
                }
            }
            queue = kept
            return taken
        }
    }

    private let state = Mutex(State())
    /// How many batches may be under way at once.
    let maxLeaders: Int
    /// The most writes one batch holds.
    let maxBatch: Int

    init(maxLeaders: Int, maxBatch: Int) {
        self.maxLeaders = max(1, maxLeaders)
        self.maxBatch = max(1, maxBatch)
    }

    /// How many batches were sent, and the largest (for tests and benchmarks).
    var sent: (batches: Int, largest: Int) { state.withLock { ($0.batches, $0.largest) } }

    /// How many writes wait for a batch.
    var waiting: Int { state.withLock { $0.queue.count } }

    /// Writes `input` in a batch sent by `send` (one result per input, in their order), alone
    /// or with others; returns its own result.
    func write(_ input: Input, key: String, send: ([Input]) async -> [Result<Output, any Error>]) async throws -> Output {
        let maxLeaders = maxLeaders, maxBatch = maxBatch
        if let others = state.withLock({ $0.lead(key, maxLeaders: maxLeaders, maxBatch: maxBatch) }) { return try await lead(input, key: key, others: others, send: send) }
        let ticket = await withCheckedContinuation { (continuation: CheckedContinuation<Ticket, Never>) in
            let others = state.withLock { state -> [Waiter]? in
                if let others = state.lead(key, maxLeaders: maxLeaders, maxBatch: maxBatch) { return others }
                state.queue.append(Waiter(key: key, input: input, continuation: continuation))
                return nil
            }
            if let others { continuation.resume(returning: .lead(others: others)) }
        }
        switch ticket {
        case .lead(let others): return try await lead(input, key: key, others: others, send: send)
        case .done(let result): return try result.get()
        }
    }

    /// Sends `input` and `others`, resumes the others with their results, and passes the lead on.
    private func lead(_ input: Input, key: String, others: [Waiter], send: ([Input]) async -> [Result<Output, any Error>]) async throws -> Output {
        var results = await send([input] + others.map(\.input))
        if results.count != others.count + 1 {
            results = Array(repeating: .failure(WriteBatcherError.resultsMissing(sent: others.count + 1, got: results.count)), count: others.count + 1)
        }
        for (waiter, result) in zip(others, results.dropFirst()) { waiter.continuation.resume(returning: .done(result)) }
        let maxLeaders = maxLeaders, maxBatch = maxBatch
        // This lead passes to the first write that may go now; while places are free (writes
        // kept waiting only by their session's write in this batch), more leads start.
        let next = state.withLock { state -> [(Waiter, [Waiter])] in
            state.inFlight.remove(key)
            for waiter in others { state.inFlight.remove(waiter.key) }
            state.batches += 1
            state.largest = max(state.largest, others.count + 1)
            state.leaders -= 1
            var leads: [(Waiter, [Waiter])] = []
            while state.leaders < maxLeaders, let index = state.queue.firstIndex(where: { !state.inFlight.contains($0.key) }) {
                let leader = state.queue.remove(at: index)
                state.inFlight.insert(leader.key)
                state.leaders += 1
                leads.append((leader, state.take(upTo: maxBatch - 1)))
            }
            return leads
        }
        for (leader, theirs) in next { leader.continuation.resume(returning: .lead(others: theirs)) }
        return try results[0].get()
    }
}

/// A batch's send that did not answer for every write it was given (a defect, never expected).
struct WriteBatcherError: Error, CustomStringConvertible {
    let description: String
    static func resultsMissing(sent: Int, got: Int) -> WriteBatcherError {
        WriteBatcherError(description: "a batch of \(sent) writes came back with \(got) results")
    }
}
