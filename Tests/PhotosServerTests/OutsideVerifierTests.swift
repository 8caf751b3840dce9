import Foundation
import PhotosTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A verifier written in Python from docs/receipts.md alone, by someone who never read our code
/// (Tests/Fixtures/receipt-verifier/verify_receipt.py), against `photos-admin audit
/// check-receipt`: the same verdict — valid, or the step that fails — on every vector of
/// docs/receipts/vectors and on live receipts of both stores, genuine and altered.
@Suite("Receipts: an outside verifier and check-receipt agree", .serialized)
struct OutsideVerifierTests {
    static var admin: String { Daemon.binDirectory + "/photos-admin" }
    static let script = BuiltProducts.packageRoot + "/Tests/Fixtures/receipt-verifier/verify_receipt.py"
    static let password = "correct horse battery"

    /// The project's Python with `cryptography` (scripts/python-env installs it).
    static func python() async throws -> String {
        let setup = try await runProcess(BuiltProducts.packageRoot + "/scripts/python-env", ["cryptography=cryptography"], in: BuiltProducts.packageRoot)
        try #require(setup.status == 0, "\(setup.output)")
        return try await runProcess(BuiltProducts.packageRoot + "/scripts/python-env", ["--python"], in: BuiltProducts.packageRoot)
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Both verdicts on the receipt in `file`: nil when valid, else the step.
    static func verdicts(_ file: String, key: String, python: String, in directory: String) async throws -> (checkReceipt: String?, outside: String?) {
        let checked = try await runTool(admin, ["audit", "check-receipt", file, "--key", key], in: directory)
        let ours: String? = switch checked.0 {
        case 0: nil
        case 3: checked.1.firstMatch(of: /FAILED at (\w+)/).map { String($0.1) } ?? "exit 3 without a step: \(checked.1)"
        default: "exit \(checked.0): \(checked.1)"
        }
        let outside = try await runProcess(python, [script, file, "--key", key], in: directory)
        let line = outside.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let theirs: String? = switch outside.status {
        case 0 where line == "valid": nil
        case 3: line.firstMatch(of: /^invalid (\w+)/).map { String($0.1) } ?? "exit 3 without a step: \(outside.output)"
        default: "exit \(outside.status): \(outside.output)"
        }
        return (ours, theirs)
    }

    @Test("every vector: check-receipt and the outside verifier give the vector's verdict")
    func vectors() async throws {
        let python = try await Self.python()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let vectorsDirectory = BuiltProducts.packageRoot + "/docs/receipts/vectors"
        let names = try FileManager.default.contentsOfDirectory(atPath: vectorsDirectory).filter { $0.hasSuffix(".json") }.sorted()
        #expect(names.count >= 20)
        for name in names {
            let vector = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: vectorsDirectory + "/" + name))) as? [String: Any])
            let receipt: Data = if let text = vector["receipt"] as? String {
                Data(text.utf8)
            } else {
                try JSONSerialization.data(withJSONObject: try #require(vector["receipt"]), options: [.sortedKeys, .withoutEscapingSlashes])
            }
            try receipt.write(to: URL(fileURLWithPath: directory.file(name)))
            let expected = vector["failsAt"] as? String
            let (ours, theirs) = try await Self.verdicts(name, key: try #require(vector["key"] as? String), python: python, in: directory.path)
            #expect(ours == expected, "\(name): check-receipt says \(ours ?? "valid"), the vector \(expected ?? "valid")")
            #expect(theirs == expected, "\(name): the outside verifier says \(theirs ?? "valid"), the vector \(expected ?? "valid")")
        }
        // The outside verifier's own run over the directory agrees too.
        let own = try await runProcess(python, [Self.script, "--vectors", vectorsDirectory], in: directory.path)
        #expect(own.status == 0 && !own.stdout.contains("MISMATCH"), "\(own.output)")
    }

    @Test("live receipts of a signed-in purchase (whole, and from a later seq), and the same altered, get one verdict from both", arguments: TestStore.all)
    func live(store: TestStore) async throws {
        let python = try await Self.python()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let postgres = store == .postgres ? try await PostgresTestDatabase.create() : nil
        defer { if let postgres { Task { await postgres.drop() } } }
        let db = postgres?.url() ?? "photos.db"
        let environment = ["PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "86399", "PHOTOSD_AUDIT_CHECKPOINT_MAX_AGE_SECONDS": "86400"]
        #expect(try await runTool(Self.admin, ["migrate", "--db", db], in: directory.path).0 == 0)
        let added = try await runTool(Self.admin, ["users", "add", "alice", "--password-stdin", "--db", db], stdin: Self.password, in: directory.path)
        #expect(added.0 == 0, "\(added.1)")
        let daemon = try await Daemon(["--seed-demo", "--db", db], in: directory.path, environment: environment)
        defer { _ = daemon.stop() }
        let (_, session) = try await daemon.request("POST", "/v1/sessions")
        let id = try #require(session["id"] as? String)
        for action in [
            #"{"action":"selectPhoto","photoId":2}"#, #"{"action":"buy"}"#,
            #"{"action":"submit","username":"alice","password":"\#(Self.password)"}"#,
        ] {
            let (status, body) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: action)
            #expect(status == 200, "\(action): \(body)")
        }
        #expect(try await runTool(Self.admin, ["audit", "checkpoint", "--db", db], in: directory.path).0 == 0)
        let key = try await runTool(Self.admin, ["audit", "key", "--note", "--db", db], in: directory.path).1.trimmingCharacters(in: .whitespacesAndNewlines)
        let authorization = try #require(SessionSecretBook.authorization(for: "/v1/sessions/\(id)"))

        for query in ["", "?fromSeq=3"] {
            var request = URLRequest(url: URL(string: daemon.baseURL + "/v1/sessions/\(id)/receipt" + query)!)
            request.setValue(authorization, forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: data, as: UTF8.self))")
            let name = "receipt\(query.isEmpty ? "" : "-cut").json"
            try data.write(to: URL(fileURLWithPath: directory.file(name)))
            let genuine = try await Self.verdicts(name, key: key, python: python, in: directory.path)
            #expect(genuine.checkReceipt == nil && genuine.outside == nil, "\(store) \(name): \(genuine)")

            // Altered as an attacker did: a name on a signed-in row, a row's detail, a redacted
            // row that still shows its detail, the newest row's hash.
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            var rows = try #require(json["rows"] as? [[String: Any]])
            let signedIn = try #require(rows.firstIndex { $0["userId"] is Int }, "a signed-in row")
            let alterations: [(String, String, ([[String: Any]]) -> [[String: Any]])] = [
                ("username", "rows", { var r = $0; r[signedIn]["username"] = "mallory"; return r }),
                ("detail", "rows", { var r = $0; r[0]["detail"] = #"{"photoId":3}"#; return r }),
                ("redacted", "format", { var r = $0; r[r.count - 1]["redacted"] = true; return r }),
                ("removed", "chain", { var r = $0; r.remove(at: 1); return r }),
            ]
            for (what, step, change) in alterations {
                var altered = json
                altered["rows"] = change(rows)
                let file = "altered-\(what)\(query.isEmpty ? "" : "-cut").json"
                try JSONSerialization.data(withJSONObject: altered).write(to: URL(fileURLWithPath: directory.file(file)))
                let verdicts = try await Self.verdicts(file, key: key, python: python, in: directory.path)
                #expect(verdicts.checkReceipt == step && verdicts.outside == step, "\(store) \(file): \(verdicts)")
            }
            rows.removeAll()
        }
    }
}
