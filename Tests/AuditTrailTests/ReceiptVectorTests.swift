@testable import AuditTrail
import Crypto
import Foundation
import PhotosModel
import PhotosTestSupport
import Testing

/// docs/receipts/vectors: genuine receipts from a real database and receipts altered at each step
/// of docs/receipts.md, each with the verdict `check-receipt` must give. `vectors` holds them to
/// it; `write` makes them again (`PHOTOSD_WRITE_RECEIPT_VECTORS=1 swift test --filter
/// ReceiptVectorTests`, then review the diff: the files are the spec's examples). The outside
/// verifier's agreement is PhotosServerTests' `OutsideVerifierTests`.
@Suite("Receipts: the spec's test vectors", .serialized)
struct ReceiptVectorTests {
    static let directory = BuiltProducts.packageRoot + "/docs/receipts/vectors"
    static let steps = ["format", "rows", "chain", "leaf", "checkpoint", "inclusion", "signature"]

    /// One vector file.
    struct Vector {
        var name: String
        /// The receipt's exact bytes (the object re-serialized, or the string's text).
        var receipt: Data
        var key: String
        var valid: Bool
        var failsAt: String?

        static func all() throws -> [Vector] {
            try FileManager.default.contentsOfDirectory(atPath: ReceiptVectorTests.directory).filter { $0.hasSuffix(".json") }.sorted().map { name in
                let data = try Data(contentsOf: URL(fileURLWithPath: ReceiptVectorTests.directory + "/" + name))
                let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(name)")
                let receipt: Data = if let text = json["receipt"] as? String {
                    Data(text.utf8)
                } else {
                    try JSONSerialization.data(withJSONObject: try #require(json["receipt"]), options: [.sortedKeys, .withoutEscapingSlashes])
                }
                return Vector(
                    name: name, receipt: receipt, key: try #require(json["key"] as? String), valid: try #require(json["valid"] as? Bool),
                    failsAt: json["failsAt"] as? String)
            }
        }
    }

    /// The verdict `check-receipt` gives: nil when valid, else the step.
    static func verdict(_ data: Data, key: SignedNote.VerifierKey) -> String? {
        do {
            _ = try AuditReceipt.decodeStrictly(data).check(key: key)
            return nil
        } catch let problem as AuditReceipt.Problem {
            return problem.step
        } catch {
            return "\(error)"
        }
    }

    @Test("every vector gets its verdict, and the set has genuine receipts and at least one altered at each step")
    func vectors() throws {
        let vectors = try Vector.all()
        for vector in vectors {
            let key = try #require(SignedNote.VerifierKey(vector.key), "\(vector.name): a malformed key")
            let verdict = Self.verdict(vector.receipt, key: key)
            #expect(vector.valid == (verdict == nil) && verdict == vector.failsAt, "\(vector.name): \(verdict ?? "valid")")
        }
        #expect(vectors.filter(\.valid).count >= 4)
        for step in Self.steps {
            #expect(vectors.contains { $0.failsAt == step }, "no vector fails at \(step)")
        }
    }

    @Test("docs/receipts.md's worked example is genuine-start.json's first row: its hash, and its bytes field by field")
    func workedExample() throws {
        let doc = try String(contentsOfFile: BuiltProducts.packageRoot + "/docs/receipts.md", encoding: .utf8)
        let vector = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.directory + "/genuine-start.json"))) as? [String: Any])
        let example = try #require(vector["example"] as? [String: Any])
        let hash = try #require(example["hash"] as? String), preimage = try #require(example["preimage"] as? String)
        let rows = try #require((vector["receipt"] as? [String: Any])?["rows"] as? [[String: Any]])
        #expect(rows.first?["hash"] as? String == hash)
        // The doc's block lists the fields one per line: joined, they are the preimage.
        let block = try #require(doc.firstMatch(of: /\n```\n(64:0{64}\n[^`]*)```/)).1
        #expect(block.split(separator: "\n").joined() == preimage, "the doc's bytes are not the vector's: run the write test, then update docs/receipts.md")
        #expect(doc.contains(hash))
        // And they are what a row's hash covers.
        let receiptObject = try #require(vector["receipt"])
        let receipt = try AuditReceipt.decodeStrictly(try JSONSerialization.data(withJSONObject: receiptObject))
        let record = try #require(receipt.rows.first?.record)
        #expect(Array(preimage.utf8) == record.preimage(previous: AuditTrails.genesisHash))
    }

    @Test("write the vectors from a real database", .enabled(if: ProcessInfo.processInfo.environment["PHOTOSD_WRITE_RECEIPT_VECTORS"] == "1"))
    func write() async throws {
        let world = try await TamperMatrixTests.World(.sqlite, .fresh)
        defer { Task { await world.close() } }
        let signing = try AuditSigningKey.load(path: world.keyPath)
        let key = signing.noteVerifierKey(origin: try await world.audit.origin())
        guard case .receipt(let whole) = try await world.audit.receipt(sessionID: world.target),
              case .receipt(let cut) = try await world.audit.receipt(sessionID: world.target, range: .init(fromSeq: 3, maxRows: 1_000))
        else {
            Issue.record("no receipt")
            return
        }
        try? FileManager.default.removeItem(atPath: Self.directory)
        try FileManager.default.createDirectory(atPath: Self.directory, withIntermediateDirectories: true)

        func object(_ receipt: AuditReceipt) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(receipt)) as? [String: Any])
        }
        func save(_ name: String, _ description: String, _ receipt: Any, key: String = key.description, failsAt: String?, extra: [String: Any] = [:]) throws {
            var vector: [String: Any] = ["description": description, "receipt": receipt, "key": key, "valid": failsAt == nil, "failsAt": failsAt ?? NSNull()]
            vector.merge(extra) { $1 }
            let data = try JSONSerialization.data(withJSONObject: vector, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            try (data + Data("\n".utf8)).write(to: URL(fileURLWithPath: Self.directory + "/" + name + ".json"))
        }
        func rows(_ json: [String: Any], _ change: (inout [[String: Any]]) -> Void) -> [String: Any] {
            var json = json
            var rows = json["rows"] as? [[String: Any]] ?? []
            change(&rows)
            json["rows"] = rows
            return json
        }
        func text(_ json: [String: Any]) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
        }
        let genuine = try object(whole), genuineCut = try object(cut)
        let first = try #require(whole.rows.first?.record)
        let signedIn = try #require(whole.rows.firstIndex { $0.content?.userId != nil })
        let last = whole.rows.count - 1, middle = whole.rows.count / 2

        // Genuine.
        try save(
            "genuine-start", "A session's whole trail from seq 1, as photosd serves it.", genuine, failsAt: nil,
            extra: ["example": ["row": 1, "preimage": String(decoding: first.preimage(previous: AuditTrails.genesisHash), as: UTF8.self), "hash": whole.rows[0].hash]])
        try save("genuine-cut", "The same trail from seq 3 (?fromSeq=3): the chain starts at previousHash, the hash of seq 2.", genuineCut, failsAt: nil)
        try save(
            "genuine-redacted", "A middle row redacted (seq, hash, redacted only): it still checks, its place and hash proven, its content not.",
            rows(genuine) { $0[middle] = ["seq": $0[middle]["seq"] ?? 0, "hash": $0[middle]["hash"] ?? "", "redacted": true] }, failsAt: nil)
        // A witness's cosignature line (C2SP tlog-cosignature, a key of its own): kept, ignored.
        let witness = Curve25519.Signing.PrivateKey()
        let note = try SignedNote(parsing: whole.checkpoint)
        let time: UInt64 = 1_796_000_000
        let cosigned = try witness.signature(for: Array("cosignature/v1\ntime \(time)\n".utf8) + Array(note.text.utf8))
        let witnessName = "witness.example/w1"
        var hasher = SHA256()
        hasher.update(data: Array(witnessName.utf8) + [0x0A, 0x04] + Array(witness.publicKey.rawRepresentation))
        let witnessID = Array(hasher.finalize()).prefix(4)
        let timeBytes = withUnsafeBytes(of: time.bigEndian) { Array($0) }
        let cosignatureLine = "\u{2014} \(witnessName) \(Data(witnessID + timeBytes + Array(cosigned)).base64EncodedString())\n"
        var withCosignature = genuine
        withCosignature["checkpoint"] = whole.checkpoint + cosignatureLine
        try save("genuine-cosigned", "The checkpoint also carries a witness's cosignature (72 bytes after the key id): a signature of another key, kept and ignored.", withCosignature, failsAt: nil)

        // Base64 with non-zero padding bits decodes to the same bytes (RFC 4648 lets a decoder
        // ignore them; Go's does): still valid.
        if let firstHash = whole.inclusion.hashes.first, firstHash.hasSuffix("=") {
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
            var characters = Array(firstHash)
            let last = characters.count - 2
            if let value = alphabet.firstIndex(of: characters[last]), value & 3 == 0 {
                characters[last] = alphabet[value | 1]
                var loose = genuine
                loose["inclusion"] = ["logIndex": whole.inclusion.logIndex, "treeSize": whole.inclusion.treeSize, "hashes": [String(characters)] + whole.inclusion.hashes.dropFirst()]
                try save("genuine-base64-padding-bits", "A proof hash whose base64 has non-zero padding bits: the same 32 bytes, still valid.", loose, failsAt: nil)
            }
        }

        // format
        let plain = try text(genuine)
        let detail = try #require(whole.rows[last].content?.detail)
        let detailJSON = String(decoding: try JSONSerialization.data(withJSONObject: [detail], options: .withoutEscapingSlashes), as: UTF8.self).dropFirst().dropLast()
        let twice = plain.replacingOccurrences(of: "\"detail\":\(detailJSON)", with: "\"detail\":\(detailJSON),\"detail\":\"{\\\"forged\\\":true}\"")
        #expect(twice != plain)
        try save("format-duplicate-key", "The newest row has \"detail\" twice (parsers disagree on which they keep): refused before any check.", twice, failsAt: "format")
        try save("format-trailing-text", "Text after the receipt's object.", plain + "\n{}", failsAt: "format")
        try save("format-row-log-index", "A middle row carries a logIndex of its own (the proof covers only the newest row's, in inclusion).", rows(genuine) { $0[middle]["logIndex"] = 3 }, failsAt: "format")
        try save(
            "format-redacted-shows-detail", "The newest row marked redacted but still showing a (forged) detail: a redacted row shows seq and hash only.",
            rows(genuine) { $0[last]["redacted"] = true; $0[last]["detail"] = #"{"forged":true}"# }, failsAt: "format")
        try save("format-display-name", "A row with a field no hash covers (a display name beside the hashed one).", rows(genuine) { $0[signedIn]["displayName"] = "alice" }, failsAt: "format")
        try save("format-missing-field", "A row without screen (every field its hash covers must be present, null where none).", rows(genuine) { $0[0].removeValue(forKey: "screen") }, failsAt: "format")
        try save("format-seq-float", "A row's seq written 1.0.", plain.replacingOccurrences(of: "\"seq\":1,", with: "\"seq\":1.0,"), failsAt: "format")
        try save("format-seq-zero", "Rows from seq 0 (seqs start at 1).", rows(genuine) { rows in for index in rows.indices { rows[index]["seq"] = index } }, failsAt: "format")
        try save(
            "format-integer-beyond-64-bits", "inclusion.treeSize beyond a signed 64-bit integer.",
            plain.replacingOccurrences(of: "\"treeSize\":\(whole.inclusion.treeSize)", with: "\"treeSize\":18446744073709551616"), failsAt: "format")

        // rows
        try save("rows-username", "A signed-in row's username (null: the row names its user by userId) changed to mallory.", rows(genuine) { $0[signedIn]["username"] = "mallory" }, failsAt: "rows")
        try save("rows-detail", "A middle row's detail changed by one character.", rows(genuine) { $0[middle]["detail"] = (($0[middle]["detail"] as? String) ?? "") + " " }, failsAt: "rows")
        try save("rows-user-id", "A row's userId changed.", rows(genuine) { $0[signedIn]["userId"] = 999 }, failsAt: "rows")
        try save("rows-hash-uppercase", "The first row's hash in uppercase hex.", rows(genuine) { $0[0]["hash"] = (($0[0]["hash"] as? String) ?? "").uppercased() }, failsAt: "rows")
        try save("rows-session", "A row of another session id (its hash recomputed would not match either).", rows(genuine) { $0[1]["sessionId"] = "another" }, failsAt: "rows")
        var wrongStart = genuineCut
        wrongStart["previousHash"] = whole.rows[0].hash
        try save("rows-previous-hash", "A cut receipt whose previousHash is not the hash of the row before its first.", wrongStart, failsAt: "rows")

        // chain
        try save("chain-row-removed", "A middle row removed.", rows(genuine) { $0.remove(at: middle) }, failsAt: "chain")
        try save("chain-rows-swapped", "Two rows swapped.", rows(genuine) { $0.swapAt(1, 2) }, failsAt: "chain")
        var noStart = genuineCut
        noStart.removeValue(forKey: "previousHash")
        try save("chain-cut-without-previous-hash", "Rows from seq 3 without previousHash: the chain has no start.", noStart, failsAt: "chain")
        var extraStart = genuine
        extraStart["previousHash"] = whole.rows[0].hash
        try save("chain-previous-hash-at-seq-1", "A previousHash on a receipt that starts at seq 1 (whose chain starts at the genesis).", extraStart, failsAt: "chain")

        // leaf
        var outside = genuine
        outside["inclusion"] = ["logIndex": whole.inclusion.treeSize, "treeSize": whole.inclusion.treeSize, "hashes": whole.inclusion.hashes]
        try save("leaf-index-outside-tree", "inclusion.logIndex equal to the tree size: no such leaf.", outside, failsAt: "leaf")

        // checkpoint
        var otherSize = genuine
        otherSize["inclusion"] = ["logIndex": whole.inclusion.logIndex, "treeSize": whole.inclusion.treeSize + 1, "hashes": whole.inclusion.hashes]
        try save("checkpoint-size", "inclusion.treeSize one more than the checkpoint's tree size.", otherSize, failsAt: "checkpoint")
        var unsigned = genuine
        unsigned["checkpoint"] = note.text
        try save("checkpoint-no-signature", "The checkpoint's text without its blank line and signatures.", unsigned, failsAt: "checkpoint")
        var control = genuine
        control["checkpoint"] = whole.checkpoint.replacingOccurrences(of: "\n\n", with: "\n\u{7}\n\n")
        try save("checkpoint-control-character", "A control character (BEL) in the note.", control, failsAt: "checkpoint")

        // inclusion
        if !whole.inclusion.hashes.isEmpty {
            var flipped = genuine
            var bytes = try #require(Data(base64Encoded: whole.inclusion.hashes[0]))
            bytes[0] ^= 1
            flipped["inclusion"] = ["logIndex": whole.inclusion.logIndex, "treeSize": whole.inclusion.treeSize, "hashes": [bytes.base64EncodedString()] + whole.inclusion.hashes.dropFirst()]
            try save("inclusion-proof-hash", "One bit of the proof's first hash flipped.", flipped, failsAt: "inclusion")
            var dropped = genuine
            dropped["inclusion"] = ["logIndex": whole.inclusion.logIndex, "treeSize": whole.inclusion.treeSize, "hashes": Array(whole.inclusion.hashes.dropLast())]
            try save("inclusion-proof-short", "The proof's last hash dropped.", dropped, failsAt: "inclusion")
        }
        var negative = genuine
        negative["inclusion"] = ["logIndex": -1, "treeSize": whole.inclusion.treeSize, "hashes": whole.inclusion.hashes]
        try save("leaf-negative-index", "inclusion.logIndex -1.", negative, failsAt: "leaf")
        var otherIndex = genuine
        otherIndex["inclusion"] = ["logIndex": whole.inclusion.logIndex - 1, "treeSize": whole.inclusion.treeSize, "hashes": whole.inclusion.hashes]
        try save("inclusion-other-index", "inclusion.logIndex changed to the leaf before.", otherIndex, failsAt: "inclusion")

        // signature
        var forged = genuine
        forged["checkpoint"] = try SignedNote.sign(note.text, with: [(key.name, Curve25519.Signing.PrivateKey())]).encoded
        try save("signature-other-key", "The same checkpoint signed by another key under the log's name.", forged, failsAt: "signature")
        let body = try LogCheckpoint(parsing: note.text)
        var extended = genuine
        extended["checkpoint"] = whole.checkpoint.replacingOccurrences(of: note.text, with: LogCheckpoint(origin: body.origin, size: body.size, root: body.root, extensions: ["extra line"]).body)
        try save("signature-text-changed", "An extension line added to the signed text.", extended, failsAt: "signature")
        try save(
            "signature-other-log", "A genuine receipt checked with a key of another name (another log).", genuine,
            key: SignedNote.VerifierKey(name: "photosd/another", publicKey: key.publicKey).description, failsAt: "signature")
    }
}
