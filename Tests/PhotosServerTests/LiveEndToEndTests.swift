import DatabaseAccess
import Foundation
import PhotosTestSupport
import SQLiteStore
import Testing

@Suite("photosd end to end", .serialized)
struct LiveEndToEndTests {
    static let password = "correct horse battery"

    /// A temporary directory whose default database (data/photos.db) has user alice.
    func prepared() async throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try await migrateDefaultDatabase(in: directory.path)
        let (status, output) = try await runTool(
            Daemon.binDirectory + "/photos-admin", ["users", "add", "alice", "--password-stdin", "--db", "data/photos.db"],
            stdin: Self.password, in: directory.path)
        #expect(status == 0, "\(output)")
        return directory
    }

    func top(_ json: [String: Any]) -> String? {
        let session = (json["session"] as? [String: Any]) ?? json
        return (session["top"] as? [String: Any])?["screen"] as? String
    }

    func stacks(_ json: [String: Any]) -> [[String]] {
        let session = (json["session"] as? [String: Any]) ?? json
        return (session["navigation"] as? [[String: Any]] ?? []).map { stack in
            (stack["screens"] as? [[String: Any]] ?? []).compactMap { $0["screen"] as? String }
        }
    }

    @Test("flows 4, 7, 8 over real HTTP; SIGTERM mid-flow exits 0; a restart resumes the flow (12)")
    func flowsAcrossRestart() async throws {
        let directory = try await prepared()
        defer { directory.remove() }
        var daemon = try await Daemon(["--seed-demo"], in: directory.path)

        // Flow 4, first half: signed out, buy from the photo screen inserts sign-in.
        let (created, session) = try await daemon.request("POST", "/v1/sessions")
        #expect(created == 201)
        let id = try #require(session["id"] as? String)
        _ = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":1}"#)
        let (_, started) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"buy"}"#)
        #expect(stacks(started) == [["photos", "photo", "signIn"]])

        // Stop in the middle of the flow.
        #expect(daemon.stop() == 0, "photosd must exit 0 on SIGTERM")
        #expect(daemon.log.contains("database closed"))
        // Its last act was a signed checkpoint (the interval, 10 s, had not come round yet)
        // covering every row written: the whole trail verifies against it.
        let afterStop = try Connection(path: directory.file("data/photos.db"), mode: .readOnly)
        let newestRow = try await afterStop.queryOne("SELECT max(id) FROM audit_events")?.int64(0)
        let covered = try await afterStop.queryOne("SELECT max(covers_until_id) FROM audit_checkpoints")?.int64(0)
        afterStop.close()
        #expect(covered != nil && covered == newestRow, "no checkpoint at shutdown covering row \(newestRow ?? 0)")
        let (verified, verifyOutput) = try await runTool(Daemon.binDirectory + "/photos-admin", ["audit", "verify", "--db", "data/photos.db"], in: directory.path)
        #expect(verified == 0, "\(verifyOutput)")
        let firstLog = daemon.log

        // Same database, new process: the flow resumes.
        daemon = try await Daemon([], in: directory.path)
        let (status, resumed) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"submit","username":"alice","password":"\#(Self.password)"}"#)
        #expect(status == 200)
        #expect(stacks(resumed) == [["photos", "photo", "buy"]])
        let token = try #require(resumed["token"] as? String)

        // Flow 7 inside it: terms over the buy screen.
        let (_, terms) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"showTerms"}"#)
        #expect(stacks(terms) == [["photos", "photo", "buy"], ["terms"]])
        let (_, dismissed) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"dismiss"}"#)
        #expect(top(dismissed) == "buy")
        let (_, bought) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"buy"}"#)
        #expect(bought["outcome"] as? String == "purchased")
        #expect(stacks(bought) == [["photos", "photo"]])

        // Flow 8: vertical purchase in a second session.
        let (_, second) = try await daemon.request("POST", "/v1/sessions")
        let other = try #require(second["id"] as? String)
        let (_, vertical) = try await daemon.request("POST", "/v1/sessions/\(other)/actions", body: #"{"action":"buyPhoto","photoId":2}"#)
        #expect(stacks(vertical) == [["photos"], ["signIn"]])
        _ = try await daemon.request("POST", "/v1/sessions/\(other)/actions", body: #"{"action":"submit","username":"alice","password":"\#(Self.password)"}"#)
        let (_, modalBuy) = try await daemon.request("POST", "/v1/sessions/\(other)/actions", body: #"{"action":"showTerms"}"#)
        #expect(stacks(modalBuy) == [["photos"], ["buy"], ["terms"]])
        _ = try await daemon.request("POST", "/v1/sessions/\(other)/actions", body: #"{"action":"cancel"}"#)
        let (_, done) = try await daemon.request("POST", "/v1/sessions/\(other)/actions", body: #"{"action":"buy"}"#)
        #expect(stacks(done) == [["photos"]])
        let (_, mine) = try await daemon.request("GET", "/v1/me/purchases", headers: ["Authorization": "Bearer \(token)"])
        #expect((mine["purchases"] as? [Any])?.count == 2)
        #expect(daemon.stop() == 0)

        // The audit trail, with plain SQL.
        let connection = try Connection(path: directory.file("data/photos.db"), mode: .readOnly)
        defer { connection.close() }
        let rows = try connection.query("SELECT seq, step, coordinator, screen FROM audit_trail WHERE session_id = \(id) ORDER BY seq")
        #expect(try rows.map { try $0.int(0) } == Array(1...rows.count))
        let steps = try rows.map { [try $0.string(1), $0.optionalString(2) ?? "-", $0.optionalString(3) ?? "-"].joined(separator: " ") }
        #expect(Array(steps.suffix(4)) == [
            "action app/buy -", "purchase.completed app/buy -", "screen.pop app/buy buy", "coordinator.finish app/buy -",
        ])
        #expect(steps.contains("auth.signIn - -"))
        await #expect(try connection.queryOne("SELECT count(*) FROM purchases")?.int(0) == 2)
        await #expect(try connection.queryOne("PRAGMA integrity_check")?.string(0) == "ok")

        // The database and its WAL are private to their owner.
        for suffix in ["", "-wal", "-shm"] {
            let path = directory.file("data/photos.db" + suffix)
            if FileManager.default.fileExists(atPath: path) {
                let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
                #expect(mode == 0o600, "data/photos.db\(suffix) has mode \(String(mode ?? 0, radix: 8))")
            }
        }

        // Neither log holds the password or the token.
        for log in [firstLog, daemon.log] {
            #expect(!log.contains(Self.password))
            #expect(!log.contains(token))
        }
    }

    @Test("docs/api.md's curl walkthrough works as written against a real photosd")
    func readmeCurlWalkthrough() async throws {
        let script = try DocBlocks.block("api-walkthrough", in: "docs/api.md")
        #expect(script.contains("curl"))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(["--seed-demo"], in: directory.path)
        defer { _ = daemon.stop() }
        let (status, output) = try await runTool(
            "/bin/bash", ["-c", "set -euo pipefail\n" + script], in: directory.path,
            environment: ["PHOTOSD": daemon.baseURL, "PHOTOS_DB": directory.file("data/photos.db")])
        #expect(status == 0, "\(output)")
        #expect(output.contains(#""outcome":"purchased""#), "\(output)")
        #expect(output.contains("purchase.completed"), "\(output)")
        #expect(output.contains("receipt verified: session"), "\(output)")
    }

    @Test("docs/api.md's tabs and deep-link lines work as written against a real photosd")
    func readmeTabsWalkthrough() async throws {
        let script = try DocBlocks.block("api-tabs-walkthrough", in: "docs/api.md")
        #expect(script.contains("openLink"))
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let daemon = try await Daemon(["--seed-demo"], in: directory.path)
        defer { _ = daemon.stop() }
        let (status, output) = try await runTool("/bin/bash", ["-c", "set -euo pipefail\n" + script], in: directory.path, environment: ["PHOTOSD": daemon.baseURL])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.first == #"{"items":[{"screens":[{"screen":"photos"},{"photoId":2,"purchased":false,"screen":"photo"}],"tab":"photos"},{"screens":[{"photos":[],"screen":"purchases"}],"tab":"purchases"}],"selected":"photos"}"#, "\(output)")
        #expect(lines.contains(#"{"selected":"purchases","top":{"actions":["selectPhoto","signIn","selectTab"],"screen":"purchases"}}"#), "\(output)")
        #expect(lines.contains(#"["photos","photo"]"#), "\(output)")
        #expect(lines.contains(#"link.open app - {"link":"/photos/3/buy"}"#), "\(output)")
        #expect(lines.contains(#"screen.pop app/photos photo {"photoId":2}"#), "\(output)")
        #expect(lines.contains { $0.hasPrefix("coordinator.start app/photos/buy - ") }, "\(output)")
        #expect(lines.contains(#"{"stacks":[["photos","photo","signIn"]],"top":{"actions":["submit","cancel","back"],"screen":"signIn"}}"#), "\(output)")
        #expect(lines.last?.contains(#""code":"not_found""#) == true, "\(output)")
    }
}
