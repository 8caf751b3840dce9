import Foundation
import PhotosTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small tmpfs mounted for one test: a real disk that fills up.
struct SmallDisk {
    let path: String

    /// True where this process may mount a tmpfs (root on Linux); the tests that need one are
    /// skipped elsewhere, saying why.
    static let canMount: Bool = {
        guard let directory = try? TemporaryDirectory() else { return false }
        defer { directory.remove() }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", directory.path]) else { return false }
        _ = run("/bin/umount", [directory.path])
        return true
    }()

    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path]) else { throw POSIXError(.EPERM) }
    }

    func grow(toMegabytes megabytes: Int) -> Bool {
        Self.run("/bin/mount", ["-o", "remount,size=\(megabytes)m", path])
    }

    func unmount() { _ = Self.run("/bin/umount", ["-l", path]) }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

@Suite("photosd on a full disk", .serialized)
struct StorageFailureTests {
    /// `POST path` with its status, `Retry-After` and error code.
    static func post(_ daemon: Daemon, _ path: String) async throws -> (status: Int, retryAfter: String?, code: String?, body: [String: Any]) {
        var request = URLRequest(url: URL(string: daemon.baseURL + path)!)
        request.httpMethod = "POST"
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Retry-After"), (body["error"] as? [String: Any])?["code"] as? String, body)
    }

    @Test(
        "disk full: 503 unavailable with Retry-After, logged once; nothing acknowledged is lost; recovers by itself",
        .enabled(if: SmallDisk.canMount, "needs permission to mount a tmpfs (root on Linux)"))
    func diskFull() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let disk = try SmallDisk(at: directory.file("data"), megabytes: 2)
        defer { disk.unmount() }
        let daemon = try Daemon(["--seed-demo"], in: directory.path, environment: ["PHOTOSD_DATABASE_DURABILITY": "full"])
        defer { _ = daemon.stop() }

        var acknowledged: [String] = []
        var refusals: [(status: Int, retryAfter: String?, code: String?)] = []
        for _ in 0..<20_000 where refusals.count < 5 {
            let answer = try await Self.post(daemon, "/v1/sessions")
            if answer.status == 201, let id = answer.body["id"] as? String {
                acknowledged.append(id)
            } else {
                refusals.append((answer.status, answer.retryAfter, answer.code))
            }
        }
        #expect(acknowledged.count > 10, "the disk filled before anything was written")
        #expect(refusals.count == 5, "the disk never filled")
        for refusal in refusals {
            #expect(refusal.status == 503)
            #expect(refusal.retryAfter == "1")
            #expect(refusal.code == "unavailable")
        }
        #expect(daemon.log.components(separatedBy: "storage unavailable").count - 1 == 1, "logged once per episode, not per request")

        // Space comes back: the next writes succeed without a restart, and once they have for
        // the quiet period (2 s) the episode's end is logged.
        #expect(disk.grow(toMegabytes: 64))
        var recovered = false
        for _ in 0..<100 where !(recovered && daemon.log.contains("storage available again")) {
            recovered = try await Self.post(daemon, "/v1/sessions").status == 201 || recovered
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(recovered)
        #expect(daemon.log.contains("storage available again"))
        #expect(daemon.log.components(separatedBy: "storage unavailable").count - 1 == 1)
        for id in acknowledged {
            let (status, session) = try await daemon.request("GET", "/v1/sessions/\(id)")
            #expect(status == 200 && session["version"] as? Int == 1, "acknowledged session \(id) lost")
        }
        #expect(daemon.stop() == 0)
        let verify = try runProcess(Daemon.binDirectory + "/photos-admin", ["check", "--db", "data/photos.db"], in: directory.path)
        #expect(verify.status == 0, "\(verify.output)")
    }
}
