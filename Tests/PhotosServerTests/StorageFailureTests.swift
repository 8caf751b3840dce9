import Foundation
import PhotosTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("photosd on a full disk", .serialized)
struct StorageFailureTests {
    /// `POST path` with its status, `Retry-After` and error code.
    static func post(_ daemon: Daemon, _ path: String) async throws -> (status: Int, retryAfter: String?, code: String?, body: [String: Any]) {
        var request = URLRequest(url: URL(string: daemon.baseURL + path)!)
        request.httpMethod = "POST"
        if let authorization = SessionSecretBook.authorization(for: path) { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        if http?.statusCode == 201 { SessionSecretBook.learn(body) }
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Retry-After"), (body["error"] as? [String: Any])?["code"] as? String, body)
    }

    @Test(
        "disk full under load: 503 unavailable with Retry-After, logged once; nothing acknowledged is lost; recovers by itself",
        .enabled(if: SmallDisk.canMount, "needs permission to mount a tmpfs (root on Linux)"))
    func diskFull() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let disk = try SmallDisk(at: directory.file("data"), megabytes: 2)
        defer { disk.unmount() }
        let daemon = try await Daemon(["--seed-demo"], in: directory.path, environment: ["PHOTOSD_DATABASE_DURABILITY": "full"])
        defer { _ = daemon.stop() }

        // Eight clients at once create sessions and act on them until each has been refused twice.
        let outcomes = try await withThrowingTaskGroup(of: (acknowledged: [String: Int], refusals: [(status: Int, retryAfter: String?, code: String?)]).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var acknowledged: [String: Int] = [:]
                    var refusals: [(status: Int, retryAfter: String?, code: String?)] = []
                    for _ in 0..<5_000 where refusals.count < 2 {
                        let created = try await Self.post(daemon, "/v1/sessions")
                        guard created.status == 201, let id = created.body["id"] as? String else {
                            refusals.append((created.status, created.retryAfter, created.code))
                            continue
                        }
                        acknowledged[id] = 1
                        let (status, body) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action": "selectPhoto", "photoId": 1}"#)
                        if status == 200 {
                            acknowledged[id] = (body["session"] as? [String: Any])?["version"] as? Int
                        } else {
                            refusals.append((status, nil, (body["error"] as? [String: Any])?["code"] as? String))
                        }
                    }
                    return (acknowledged, refusals)
                }
            }
            return try await group.reduce(into: (acknowledged: [String: Int](), refusals: [(status: Int, retryAfter: String?, code: String?)]())) {
                $0.acknowledged.merge($1.acknowledged) { max($0, $1) }
                $0.refusals += $1.refusals
            }
        }
        let acknowledged = outcomes.acknowledged
        let refusals = outcomes.refusals
        #expect(acknowledged.count > 10, "the disk filled before anything was written")
        #expect(refusals.count == 16, "the disk never filled")
        for refusal in refusals {
            #expect(refusal.status == 503)
            #expect(refusal.code == "unavailable")
        }
        #expect(refusals.contains { $0.retryAfter == "1" })
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
        for (id, version) in acknowledged {
            let (status, session) = try await daemon.request("GET", "/v1/sessions/\(id)")
            #expect(status == 200 && session["version"] as? Int == version, "acknowledged state of session \(id) lost")
        }
        #expect(daemon.stop() == 0)
        let verify = try await runProcess(Daemon.binDirectory + "/photos-admin", ["check", "--db", "data/photos.db"], in: directory.path)
        #expect(verify.status == 0, "\(verify.output)")
    }
}
