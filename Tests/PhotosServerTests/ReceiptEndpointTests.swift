import Foundation
import PhotosTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receipts and the public log through a real photosd and photos-admin: `202` until a checkpoint
/// signs the session, then a receipt that `audit check-receipt` accepts with the key `audit key
/// --note` prints (and refuses, naming the step, once a byte changed); the checkpoint as
/// `text/plain`; consistency proofs; `log.public` off; `audit witness` keeping checkpoints and
/// exiting 3 for a log whose history was rewritten under the same key and name.
@Suite("Receipts over HTTP and the operator's tools")
struct ReceiptEndpointTests {
    static var admin: String { Daemon.binDirectory + "/photos-admin" }

    static func get(_ url: String, authorization: String? = nil) async throws -> (Int, String, String) {
        var request = URLRequest(url: URL(string: url)!)
        if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Content-Type") ?? "", String(decoding: data, as: UTF8.self))
    }

    @Test("a receipt is 202 until a checkpoint signs the session, then checks out offline with the note key; a changed byte fails at the step it breaks; the checkpoint and consistency proofs are public, and gone with log.public false")
    func receiptAndLog() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Checkpoints only when asked (and at shutdown): the test decides when the log is signed.
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "86399", "PHOTOSD_AUDIT_CHECKPOINT_MAX_AGE_SECONDS": "86400"]
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        defer { _ = daemon.stop() }
        let (created, session) = try await daemon.request("POST", "/v1/sessions")
        #expect(created == 201)
        let id = try #require(session["id"] as? String)
        #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: #"{"action":"selectPhoto","photoId":1}"#).0 == 200)
        let authorization = try #require(SessionSecretBook.authorization(for: "/v1/sessions/\(id)"))

        let pending = try await Self.get(daemon.baseURL + "/v1/sessions/\(id)/receipt", authorization: authorization)
        #expect(pending.0 == 202 && pending.2.contains(#""status":"pending""#), "\(pending)")
        #expect(try await Self.get(daemon.baseURL + "/v1/sessions/\(id)/receipt").0 == 401, "a receipt needs the session's secret")
        #expect(try await Self.get(daemon.baseURL + "/v1/log/checkpoint").0 == 404, "no checkpoint yet")

        let (checkpointed, output) = try await runTool(Self.admin, ["audit", "checkpoint", "--db", "photos.db"], in: directory.path)
        #expect(checkpointed == 0, "\(output)")
        let (status, contentType, body) = try await Self.get(daemon.baseURL + "/v1/sessions/\(id)/receipt", authorization: authorization)
        #expect(status == 200, "\(body)")
        #expect(contentType.hasPrefix("application/json"))
        let receipt = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(Set(receipt.keys) == ["sessionId", "rows", "inclusion", "checkpoint"])
        let rows = try #require(receipt["rows"] as? [[String: Any]])
        // Each row: exactly what its hash covers (no leaf index, no display name joined in).
        let hashed: Set<String> = ["sessionId", "seq", "at", "actor", "userId", "username", "coordinator", "step", "screen", "detail", "hash"]
        #expect(rows.count >= 4 && rows.allSatisfy { Set($0.keys) == hashed && $0["hash"] is String }, "\(rows)")
        let inclusion = try #require(receipt["inclusion"] as? [String: Any])
        #expect(Set(inclusion.keys) == ["logIndex", "treeSize", "hashes"] && inclusion["logIndex"] is Int)

        // Offline, with the note key.
        let (keyStatus, keyOutput) = try await runTool(Self.admin, ["audit", "key", "--note", "--db", "photos.db"], in: directory.path)
        let noteKey = keyOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(keyStatus == 0 && noteKey.split(separator: "+").count >= 3, "\(keyOutput)")
        try Data(body.utf8).write(to: URL(fileURLWithPath: directory.file("receipt.json")))
        let checked = try await runTool(Self.admin, ["audit", "check-receipt", "receipt.json", "--key", noteKey], in: directory.path)
        #expect(checked.0 == 0 && checked.1.contains("receipt verified"), "\(checked.1)")
        let altered = body.replacingOccurrences(of: #""step":"screen.push""#, with: #""step":"screen.pushed""#)
        #expect(altered != body)
        try Data(altered.utf8).write(to: URL(fileURLWithPath: directory.file("altered.json")))
        let refused = try await runTool(Self.admin, ["audit", "check-receipt", "altered.json", "--key", noteKey], in: directory.path)
        #expect(refused.0 == 3 && refused.1.contains("FAILED at rows"), "\(refused.1)")
        let wrongKey = try await runTool(Self.admin, ["audit", "check-receipt", "receipt.json", "--key", "photosd/other+00000000+AQ=="], in: directory.path)
        #expect(wrongKey.0 != 0 && wrongKey.0 != 3, "a malformed key is a usage error, not a failed check: \(wrongKey.1)")

        // photos-admin audit prove writes the same receipt.
        let proved = try await runTool(Self.admin, ["audit", "prove", "--session", id, "--out", "proved.json", "--db", "photos.db"], in: directory.path)
        #expect(proved.0 == 0, "\(proved.1)")
        let provedReceipt = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.file("proved.json")))) as? [String: Any])
        #expect(provedReceipt["checkpoint"] as? String == receipt["checkpoint"] as? String)
        #expect((provedReceipt["rows"] as? [[String: Any]])?.count == rows.count)

        // The public log.
        let note = try await Self.get(daemon.baseURL + "/v1/log/checkpoint")
        #expect(note.0 == 200 && note.1.hasPrefix("text/plain") && note.2 == receipt["checkpoint"] as? String, "\(note)")
        let size = try #require(Int(note.2.split(separator: "\n")[1]))
        let consistency = try await daemon.request("GET", "/v1/log/consistency?from=1&to=\(size)")
        #expect(consistency.0 == 200 && consistency.1["from"] as? Int == 1 && consistency.1["to"] as? Int == size && consistency.1["hashes"] is [String], "\(consistency)")
        for bad in ["", "?from=0&to=\(size)", "?from=2&to=1", "?from=1&to=\(size + 1)", "?from=x&to=1"] {
            #expect(try await daemon.request("GET", "/v1/log/consistency" + bad).0 == 400, "\(bad)")
        }
        _ = daemon.stop()

        let closed = try await Daemon(["--db", "photos.db"], in: directory.path, environment: environment.merging(["PHOTOSD_LOG_PUBLIC": "false"]) { $1 })
        defer { _ = closed.stop() }
        #expect(try await Self.get(closed.baseURL + "/v1/log/checkpoint").0 == 404)
        #expect(try await closed.request("GET", "/v1/log/consistency?from=1&to=1").0 == 404)
        #expect(try await Self.get(closed.baseURL + "/v1/sessions/\(id)/receipt", authorization: authorization).0 == 200, "receipts stay")
    }

    @Test("receipts.maxRows bounds a receipt: the newest rows with previousHash by default, ?fromSeq=N from row N, each checked offline; a fromSeq past the end is 400")
    func bounded() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = [
            "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "86399", "PHOTOSD_AUDIT_CHECKPOINT_MAX_AGE_SECONDS": "86400", "PHOTOSD_RECEIPTS_MAX_ROWS": "3",
        ]
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        defer { _ = daemon.stop() }
        let (_, session) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(session["id"] as? String)
        for action in [#"{"action":"selectPhoto","photoId":1}"#, #"{"action":"back"}"#, #"{"action":"selectPhoto","photoId":2}"#] {
            #expect(try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: action).0 == 200)
        }
        #expect(try await runTool(Self.admin, ["audit", "checkpoint", "--db", "photos.db"], in: directory.path).0 == 0)
        let noteKey = try await runTool(Self.admin, ["audit", "key", "--note", "--db", "photos.db"], in: directory.path).1
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let authorization = try #require(SessionSecretBook.authorization(for: "/v1/sessions/\(id)"))
        let trail = try await daemon.request("GET", "/v1/sessions/\(id)/events?limit=1000").1["events"] as? [[String: Any]] ?? []
        let newest = try #require(trail.last?["seq"] as? Int)
        #expect(newest >= 6, "\(trail.count) rows")

        func receipt(_ query: String) async throws -> (Int, [String: Any], String) {
            let (status, _, body) = try await Self.get(daemon.baseURL + "/v1/sessions/\(id)/receipt" + query, authorization: authorization)
            return (status, (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:], body)
        }
        func checks(_ body: String, _ name: String) async throws -> String {
            try Data(body.utf8).write(to: URL(fileURLWithPath: directory.file(name)))
            let checked = try await runTool(Self.admin, ["audit", "check-receipt", name, "--key", noteKey], in: directory.path)
            #expect(checked.0 == 0, "\(name): \(checked.1)")
            return checked.1
        }
        let newestRows = try await receipt("")
        let newestSeqs = (newestRows.1["rows"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int }
        #expect(newestRows.0 == 200 && newestSeqs == [newest - 2, newest - 1, newest] && newestRows.1["previousHash"] is String, "\(newestRows.2)")
        #expect(try await checks(newestRows.2, "newest.json").contains("3 rows (seq \(newest - 2)–\(newest)) chained from previousHash"))
        let firstRows = try await receipt("?fromSeq=1")
        #expect(firstRows.0 == 200 && (firstRows.1["rows"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [1, 2, 3] && firstRows.1["previousHash"] == nil, "\(firstRows.2)")
        _ = try await checks(firstRows.2, "first.json")
        // The first page's newest row's hash is where the second page's chain starts.
        let middle = try await receipt("?fromSeq=4")
        #expect(middle.1["previousHash"] as? String == (firstRows.1["rows"] as? [[String: Any]])?.last?["hash"] as? String)
        _ = try await checks(middle.2, "middle.json")
        // Cut without previousHash, the chain has no start: refused at chain.
        var cut = middle.1
        cut["previousHash"] = nil
        try JSONSerialization.data(withJSONObject: cut).write(to: URL(fileURLWithPath: directory.file("cut.json")))
        let refused = try await runTool(Self.admin, ["audit", "check-receipt", "cut.json", "--key", noteKey], in: directory.path)
        #expect(refused.0 == 3 && refused.1.contains("FAILED at chain"), "\(refused.1)")
        for bad in ["?fromSeq=\(newest + 1)", "?fromSeq=0", "?fromSeq=x"] {
            #expect(try await receipt(bad).0 == 400, "\(bad)")
        }
        // audit prove takes the same bound and --from-seq.
        let proved = try await runTool(Self.admin, ["audit", "prove", "--session", id, "--from-seq", "2", "--out", "proved.json", "--db", "photos.db"], in: directory.path, environment: ["PHOTOSD_RECEIPTS_MAX_ROWS": "3"])
        #expect(proved.0 == 0 && proved.1.contains("3 rows"), "\(proved.1)")
        _ = try await checks(try String(contentsOfFile: directory.file("proved.json"), encoding: .utf8), "proved.json")
        let past = try await runTool(Self.admin, ["audit", "prove", "--session", id, "--from-seq", "\(newest + 1)", "--db", "photos.db"], in: directory.path)
        #expect(past.0 != 0 && past.0 != 3 && past.1.contains("past the trail's newest row"), "\(past.1)")
    }

    @Test("audit witness keeps the first checkpoint, accepts one that extends it, and exits 3 for a log rewritten under the same key and origin and for a forged checkpoint; another origin is 1")
    func witness() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1"]
        let daemon = try await Daemon(["--seed-demo", "--db", "photos.db"], in: directory.path, environment: environment)
        #expect(try await daemon.request("POST", "/v1/sessions").0 == 201)
        try await Task.sleep(for: .seconds(2.5))
        let noteKey = try await runTool(Self.admin, ["audit", "key", "--note", "--db", "photos.db"], in: directory.path).1
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let witness = ["audit", "witness", "--state", "kept.note", "--url", daemon.baseURL, "--key", noteKey]
        let first = try await runTool(Self.admin, witness, in: directory.path)
        #expect(first.0 == 0 && first.1.contains("first run"), "\(first.1)")
        for _ in 0..<3 { #expect(try await daemon.request("POST", "/v1/sessions").0 == 201) }
        try await Task.sleep(for: .seconds(2.5))
        let second = try await runTool(Self.admin, witness, in: directory.path)
        #expect(second.0 == 0 && second.1.contains("extends"), "\(second.1)")
        let kept = try String(contentsOfFile: directory.file("kept.note"), encoding: .utf8)
        _ = daemon.stop()

        // Another history, signed with the same key under the same name: a fork.
        let origin = String(noteKey.split(separator: "+")[0])
        try FileManager.default.createDirectory(atPath: directory.file("fork"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: directory.file("audit-signing.key"), toPath: directory.file("fork/audit-signing.key"))
        let fork = try await Daemon(
            ["--seed-demo", "--db", "fork/photos.db"], in: directory.path, environment: environment.merging(["PHOTOSD_AUDIT_LOG_ORIGIN": origin]) { $1 })
        defer { _ = fork.stop() }
        for _ in 0..<8 { #expect(try await fork.request("POST", "/v1/sessions").0 == 201) }
        try await Task.sleep(for: .seconds(2.5))
        let forked = try await runTool(Self.admin, ["audit", "witness", "--state", "kept.note", "--url", fork.baseURL, "--key", noteKey], in: directory.path)
        #expect(forked.0 == 3 && forked.1.contains("rewritten"), "\(forked.1)")
        #expect(try String(contentsOfFile: directory.file("kept.note"), encoding: .utf8) == kept, "the kept checkpoint stays")
        // The fork's bigger tree kept, then the first log again: a tree that shrank.
        let forkState = try await runTool(Self.admin, ["audit", "witness", "--state", "fork.note", "--url", fork.baseURL, "--key", noteKey], in: directory.path)
        #expect(forkState.0 == 0, "\(forkState.1)")
        _ = fork.stop()
        let again = try await Daemon(["--db", "photos.db"], in: directory.path, environment: ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "86399", "PHOTOSD_AUDIT_CHECKPOINT_MAX_AGE_SECONDS": "86400"])
        defer { _ = again.stop() }
        let shrank = try await runTool(Self.admin, ["audit", "witness", "--state", "fork.note", "--url", again.baseURL, "--key", noteKey], in: directory.path)
        #expect(shrank.0 == 3 && shrank.1.contains("shrank"), "\(shrank.1)")
        // Another key's log is not read as this one's.
        let otherKey = try await runTool(Self.admin, ["audit", "witness", "--state", "other.note", "--url", again.baseURL, "--key", "other+00000000+AQ=="], in: directory.path)
        #expect(otherKey.0 != 0 && otherKey.0 != 3, "\(otherKey.1)")

        // A checkpoint of this log that its key did not sign (the root changed under the
        // signature), served where the log was: forged, exit 3.
        let genuine = String(decoding: try await URLSession.shared.data(from: URL(string: again.baseURL + "/v1/log/checkpoint")!).0, as: UTF8.self)
        var lines = genuine.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count > 3, "\(genuine)")
        lines[2] = Data(repeating: 7, count: 32).base64EncodedString()
        let forger = try await StaticTextServer.start(["/v1/log/checkpoint": lines.joined(separator: "\n"), "/v1/log/rotations": ""])
        defer { forger.stop() }
        let forged = try await runTool(Self.admin, ["audit", "witness", "--state", "forged.note", "--url", forger.baseURL, "--key", noteKey], in: directory.path)
        #expect(forged.0 == 3 && forged.1.contains("forged"), "\(forged.0) \(forged.1)")
    }
}
