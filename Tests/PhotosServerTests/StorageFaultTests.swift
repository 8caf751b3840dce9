import DatabaseAccess
import Foundation
import Hummingbird
import HummingbirdTesting
import PhotosCore
import PhotosTestSupport
import SQLiteStore
import Testing

/// photosd over the fault-injecting VFS (`database.vfs`): what a client sees when a write or an
/// fsync fails or the disk is full, and that the server recovers by itself.
@Suite("photosd on failing storage")
struct StorageFaultTests {
    /// Runs `body` against an app whose database goes through a fresh fault-injecting VFS.
    static func withFaultyApp(
        _ body: @escaping @Sendable (any TestClientProtocol, FaultVFS, ServerHarness, _ metrics: @Sendable () async throws -> String) async throws -> Void
    ) async throws {
        let vfs = try FaultVFS()
        let h = try await ServerHarness.make { configuration in
            configuration.databaseVFS = vfs.name
            configuration.durability = .full
            // No background checkpoint may take the injected failure meant for a request.
            configuration.auditCheckpointIntervalSeconds = 3_600
        }
        defer { h.close() }
        try await h.test { client, metrics in try await body(client, vfs, h, metrics) }
        vfs.unregister()
    }

    static func expectUnavailable(_ response: TestResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == .serviceUnavailable, sourceLocation: sourceLocation)
        #expect(response.headers[.retryAfter] == "1", sourceLocation: sourceLocation)
        #expect(response.errorCode == "unavailable", sourceLocation: sourceLocation)
    }

    @Test("full disk, failing write, failing fsync: every request caught by it gets 503; nothing of it is kept; the next request succeeds")
    func faults() async throws {
        try await Self.withFaultyApp { client, vfs, h, readMetrics in
            let id = try await client.newSession()
            #expect(try await client.act(id, #"{"action": "selectPhoto", "photoId": 1}"#).status == .ok)

            // A full disk while sixteen clients write at once (batched together by the writer).
            vfs.fail(.write, code: InjectedCode.full, persistent: true)
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        index % 2 == 0
                            ? try await client.createSession()
                            : try await client.act(id, #"{"action": "back"}"#)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for answer in answers { Self.expectUnavailable(answer) }
            vfs.clearFailures()
            let session = try await client.get("/v1/sessions/\(id)")
            #expect(session.json["version"] as? Int == 2, "a refused action changed the session")
            #expect(try await h.query("SELECT count(*) FROM sessions").first?.int(0) == 1, "a refused session was kept")

            // One failing write, then one failing fsync: each refuses its request, and the
            // next request goes through without a restart.
            for (operation, code) in [(FaultVFS.Operation.write, InjectedCode.ioerrWrite), (.sync, InjectedCode.ioerrFsync)] {
                vfs.fail(operation, code: code)
                Self.expectUnavailable(try await client.act(id, #"{"action": "back"}"#))
                #expect(try await client.get("/v1/sessions/\(id)").json["version"] as? Int == 2)
            }
            let back = try await client.act(id, #"{"action": "back"}"#)
            #expect(back.status == .ok)
            #expect((back.json["session"] as? [String: Any])?["version"] as? Int == 3)
            #expect(try await client.createSession().status == .created)
            // Fewer failed writes than refused requests: the writer batched them, and each batch
            // failed whole.
            #expect(vfs.statistics.injectedFailures < 16 + 2)
            // Each fault made the writer replace its connection, and /metrics says how often.
            let metrics = try await readMetrics()
            let reopens = metrics.split(separator: "\n").first { $0.hasPrefix("photosd_writer_reopens ") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
            #expect((reopens ?? 0) >= 3, "\(String(describing: reopens))")
        }
    }
}
