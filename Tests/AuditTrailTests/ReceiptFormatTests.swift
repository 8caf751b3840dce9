@testable import AuditTrail
import Foundation
import Testing

/// A receipt is read as one thing: JSON with a key twice in any object (Swift keeps the first,
/// jq, Python, node and Go the last) and fields beyond the receipt's own are refused at `format`,
/// before any check — so that no reader is shown a value the checks did not cover.
@Suite("Receipts: one reading only")
struct ReceiptFormatTests {
    static let genuine = #"""
        {"checkpoint":"log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n\u2014 log AAAAAAAA\n","inclusion":{"hashes":[],"logIndex":0,"treeSize":1},"rows":[{"actor":"client","at":"2026-11-29T00:00:00.000Z","coordinator":"app","detail":"{\"photoId\":1}","hash":"00","screen":null,"seq":1,"sessionId":"s","step":"session.start","userId":null,"username":null}],"sessionId":"s"}
        """#

    static func refused(_ text: String) -> AuditReceipt.Problem? {
        #expect(throws: AuditReceipt.Problem.self) { try AuditReceipt.decodeStrictly(Data(text.utf8)) }
    }

    @Test("the genuine shape decodes; a duplicate key anywhere (also spelled with an escape), an unknown field in the receipt, a row or the proof, trailing text: refused at format")
    func strict() throws {
        let receipt = try AuditReceipt.decodeStrictly(Data(Self.genuine.utf8))
        #expect(receipt.rows.first?.content?.detail == #"{"photoId":1}"#)
        // A redacted row: seq, hash and redacted, nothing else.
        let redacted = try AuditReceipt.decodeStrictly(Data(Self.genuine.replacingOccurrences(
            of: #"{"actor":"client","at":"2026-11-29T00:00:00.000Z","coordinator":"app","detail":"{\"photoId\":1}","hash":"00","screen":null,"seq":1,"sessionId":"s","step":"session.start","userId":null,"username":null}"#,
            with: #"{"hash":"00","redacted":true,"seq":1}"#).utf8))
        #expect(redacted.rows.first?.redacted == true && redacted.rows.first?.content == nil)
        let cases: [(String, String)] = [
            (Self.genuine.replacingOccurrences(of: #""detail":"{\"photoId\":1}","#, with: #""detail":"{\"photoId\":1}","detail":"{\"photoId\":2}","#), "\"detail\" twice"),
            (Self.genuine.replacingOccurrences(of: #""step":"session.start","#, with: #""step":"session.start","st\u0065p":"purchase.completed","#), "\"step\" twice"),
            (Self.genuine.replacingOccurrences(of: #""sessionId":"s"}"#, with: #""sessionId":"s","sessionId":"t"}"#), "\"sessionId\" twice"),
            (Self.genuine.replacingOccurrences(of: #""username":null}"#, with: #""username":null,"note":"paid in full"}"#), "unknown field \"note\" in row 1"),
            (Self.genuine.replacingOccurrences(of: #""treeSize":1}"#, with: #""treeSize":1,"root":"x"}"#), "unknown field \"root\" in inclusion"),
            (Self.genuine.replacingOccurrences(of: #""sessionId":"s"}"#, with: #""sessionId":"s","verified":true}"#), "unknown field \"verified\" in the receipt"),
            (Self.genuine + "{}", "after the JSON value"),
            // What no hash covers is not in a row: a leaf index of its own (the proof covers the
            // newest row's, in inclusion), a display name beside the hashed one, and a redacted
            // row's fields (its hash no longer proves them).
            (Self.genuine.replacingOccurrences(of: #""seq":1,"#, with: #""seq":1,"logIndex":7,"#), "unknown field \"logIndex\" in row 1"),
            (Self.genuine.replacingOccurrences(of: #""seq":1,"#, with: #""seq":1,"recordedUsername":"alice","#), "unknown field \"recordedUsername\" in row 1"),
            (Self.genuine.replacingOccurrences(of: #""seq":1,"#, with: #""seq":1,"redacted":true,"#), "row 1 is redacted and shows \"actor\""),
            (Self.genuine.replacingOccurrences(of: #""seq":1,"#, with: #""seq":1,"redacted":false,"#), "row 1 is redacted and shows"),
            (Self.genuine.replacingOccurrences(of: #","username":null}"#, with: "}"), "row 1 lacks \"username\""),
            (Self.genuine.replacingOccurrences(of: #""screen":null,"#, with: ""), "row 1 lacks \"screen\""),
            (Self.genuine.replacingOccurrences(of: #""seq":1,"#, with: #""seq":1.0,"#), "row 1's seq is not an integer"),
            (Self.genuine.replacingOccurrences(of: #""treeSize":1}"#, with: #""treeSize":1e0}"#), "inclusion.treeSize is not an integer"),
            (Self.genuine.replacingOccurrences(of: #""userId":null"#, with: #""userId":true"#), "userId is not an integer"),
            (#"{"a":1,}"#, "a key expected"),
        ]
        // A byte order mark before the object (as bytes: Foundation's JSON reader drops a leading
        // U+FEFF from a string, so no vector can carry one).
        let marked = Data([0xEF, 0xBB, 0xBF]) + Data(Self.genuine.utf8)
        #expect(throws: AuditReceipt.Problem.self) { try AuditReceipt.decodeStrictly(marked) }
        for (text, words) in cases {
            let problem = Self.refused(text)
            #expect(problem?.step == "format" && problem?.reason.contains(words) == true, "\(words): \(String(describing: problem))")
        }
    }

    @Test("StrictJSON: the grammar's corners")
    func grammar() throws {
        for good in [#"{}"#, #"[]"#, #"{"a":[1,-2.5e3,true,false,null,"\ud83d\ude00"]}"#, " {\"a\" : {\"a\": 1}} "] {
            #expect(throws: Never.self) { try StrictJSON.check(Data(good.utf8)) }
        }
        for bad in [#"{"a":01}"#, #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, "{\"a\":\"\u{1}\"}", #"{"a" 1}"#, #"[1,]"#, #""#, #"{"a":1}{"#] {
            #expect(throws: StrictJSON.Problem.self, "\(bad)") { try StrictJSON.check(Data(bad.utf8)) }
        }
    }
}
