import AuditTrail
import PhotosModel
@testable import PhotosServer
import Synchronization
import Testing

/// `ReceiptServing`: one build per receipt while its stamp holds, shared by whoever asks at
/// once; a new stamp builds again; builds one at a time; beyond the queue, `429`.
@Suite("Receipts served without costing a bystander")
struct ReceiptServingTests {
    static let key = ReceiptServing.Key(sessionID: "s", fromSeq: nil)
    static func stamp(_ seq: Int, checkpoint: Int64 = 1) -> AuditReceipts.Stamp { .init(trailSeq: seq, trailHash: "h\(seq)", checkpoint: checkpoint) }

    /// Counts builds and the most that ran at once.
    final class Builds: Sendable {
        let state = Mutex((count: 0, running: 0, most: 0))
        func build(_ bytes: [UInt8], wait: Duration = .milliseconds(20)) async throws -> ReceiptServing.Served {
            state.withLock { $0.count += 1; $0.running += 1; $0.most = max($0.most, $0.running) }
            try await Task.sleep(for: wait)
            state.withLock { $0.running -= 1 }
            return .receipt(bytes)
        }
        var count: Int { state.withLock { $0.count } }
        var most: Int { state.withLock { $0.most } }
    }

    static func bytes(_ served: ReceiptServing.Served) -> [UInt8]? {
        if case .receipt(let bytes) = served { bytes } else { nil }
    }

    @Test("ten clients asking for one receipt at once: one build; asked again at the same stamp: kept; a new row or a new checkpoint: built again; no stamp: never kept")
    func kept() async throws {
        let serving = ReceiptServing()
        let builds = Builds()
        let answers = try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            for _ in 0..<10 { group.addTask { Self.bytes(try await serving.serve(Self.key, stamp: Self.stamp(5)) { try await builds.build([1]) }) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 10 && answers.allSatisfy { $0 == [1] })
        #expect(builds.count == 1)
        #expect(Self.bytes(try await serving.serve(Self.key, stamp: Self.stamp(5)) { try await builds.build([2]) }) == [1])
        #expect(builds.count == 1)
        #expect(Self.bytes(try await serving.serve(Self.key, stamp: Self.stamp(6)) { try await builds.build([3]) }) == [3])
        #expect(Self.bytes(try await serving.serve(Self.key, stamp: Self.stamp(6, checkpoint: 2)) { try await builds.build([4]) }) == [4])
        #expect(builds.count == 3)
        // Another range of the same session is another receipt.
        let from = ReceiptServing.Key(sessionID: "s", fromSeq: 3)
        #expect(Self.bytes(try await serving.serve(from, stamp: Self.stamp(6, checkpoint: 2)) { try await builds.build([5]) }) == [5])
        for value: UInt8 in [6, 7] {
            #expect(Self.bytes(try await serving.serve(Self.key, stamp: nil) { try await builds.build([value]) }) == [value])
        }
        #expect(builds.count == 6)
        // An outcome that is not a receipt is not kept.
        let pending = try await serving.serve(ReceiptServing.Key(sessionID: "p", fromSeq: nil), stamp: Self.stamp(1)) { .other(.pending) }
        guard case .other(.pending) = pending else { Issue.record("\(pending)"); return }
        #expect(await serving.keptCount == 2)
    }

    @Test("distinct receipts are built one at a time; beyond maxWaiting, 429 with Retry-After")
    func oneAtATime() async throws {
        let serving = ReceiptServing(maxWaiting: 3)
        let builds = Builds()
        let outcomes = await withTaskGroup(of: Result<[UInt8]?, any Error>.self) { group in
            for index in 0..<8 {
                group.addTask {
                    await Result(catching: {
                        Self.bytes(try await serving.serve(ReceiptServing.Key(sessionID: "s", fromSeq: index + 1), stamp: Self.stamp(9)) {
                            try await builds.build([UInt8(index)], wait: .milliseconds(100))
                        })
                    })
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(builds.most == 1, "builds overlapped")
        let refused = outcomes.compactMap { outcome -> PhotosError? in
            if case .failure(let error as PhotosError) = outcome { error } else { nil }
        }
        #expect(outcomes.filter { (try? $0.get()) != nil }.count == builds.count)
        #expect(!refused.isEmpty && refused.allSatisfy { $0.code == .tooManyAttempts && $0.retryAfter == 1 }, "\(outcomes)")
        #expect(builds.count >= 4 && builds.count + refused.count == 8)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
