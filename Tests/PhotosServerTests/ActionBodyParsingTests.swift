import Foundation
@testable import PhotosServer
import PhotosTestSupport
import Testing

/// `ActionBody.fastParse` against `JSONDecoder`: whatever the fast path accepts, the
/// decoder must read the same way; whatever the decoder refuses, the fast path must refuse.
@Suite("Action request fast path")
struct ActionRequestParsingTests {
    func fast(_ text: String) -> ActionBody? {
        Array(text.utf8).withUnsafeBytes { ActionBody.fastParse($0) }
    }

    func decoded(_ text: String) -> ActionBody? {
        try? JSONDecoder().decode(ActionBody.self, from: Data(text.utf8))
    }

    @Test("the bodies clients send take the fast path, with the decoder's result")
    func commonBodies() {
        let bodies = [
            #"{"action":"selectPhoto","photoId":3}"#,
            #"{"action":"back"}"#,
            #" { "action" : "submit", "username":"alice" ,"password":"s3cret!" } "#,
            #"{"action":"buy","expectVersion":12}"#,
            #"{"action":"buyPhoto","photoId":9223372036854775,"expectVersion":null,"extra":"ignored","n":-1}"#,
            "{\n\t\"action\": \"cancel\"\r\n}",
        ]
        for body in bodies {
            let value = fast(body)
            #expect(value != nil, "\(body)")
            #expect(value == decoded(body), "\(body)")
        }
    }

    @Test("anything unusual is left to the decoder")
    func unusualBodies() {
        let bodies = [
            "", "{", "}", "[]", "null", #"{"action":"back"} x"#, #"{"action":"back",}"#, #"{"action":"back""#,
            #"{"photoId":3}"#, #"{"action":null}"#, #"{"action":3}"#, #"{"action":"back","photoId":"3"}"#,
            #"{"action":"back","photoId":1.0}"#, #"{"action":"back","photoId":1e3}"#, #"{"action":"back","photoId":01}"#,
            #"{"action":"back","photoId":12345678901234567890}"#, #"{"action":"back","photoId":-}"#,
            #"{"action":"back","photoId":true}"#, #"{"action":"back","x":{"y":1}}"#, #"{"action":"back","x":[1]}"#,
            #"{"action":"b\u0061ck"}"#, #"{"action":"b\"ack"}"#, #"{"action":"café"}"#, #"{"action":"back","action":"buy"}"#,
            #"{"action":"back","password":nul}"#, "{\"action\":\"ba\tck\"}",
        ]
        for body in bodies {
            #expect(fast(body) == nil, "\(body)")
        }
    }

    @Test("random bodies: the fast path never disagrees with the decoder")
    func randomBodies() {
        var random = SeededGenerator(state: UInt64(ProcessInfo.processInfo.environment["PHOTOSD_RANDOM_SEED"] ?? "") ?? 20_261_122)
        let keys = [#""action""#, #""action""#, #""photoId""#, #""username""#, #""password""#, #""expectVersion""#, #""other""#, #""act\u0069on""#]
        // Mostly values the fast path reads, so that many bodies get through it.
        let plainValues = [#""back""#, #""selectPhoto""#, "3", "-7", "0", "null", #""""#, "123456789012345678"]
        let oddValues = [
            "00", "1.5", "2e2", "true", #""a\"b""#, #""é""#, "99999999999999999999", "1234567890123456789", "[]", "{}", #""\u0041""#,
        ]
        let glue = ["", " ", "\n", ",", ":", "}", "{"]
        var accepted = 0
        for _ in 0..<20_000 {
            var text = Bool.random(using: &random) ? "{" : " {"
            let members = Int.random(in: 0...4, using: &random)
            for index in 0..<members {
                if index > 0 { text += Int.random(in: 0..<10, using: &random) == 0 ? glue.randomElement(using: &random)! : "," }
                let value = Int.random(in: 0..<5, using: &random) == 0 ? oddValues.randomElement(using: &random)! : plainValues.randomElement(using: &random)!
                text += keys.randomElement(using: &random)! + ":" + value
            }
            text += Int.random(in: 0..<20, using: &random) == 0 ? glue.randomElement(using: &random)! : "}"
            guard let value = fast(text) else { continue }
            accepted += 1
            #expect(value == decoded(text), "\(text)")
        }
        // The generator is tuned so that a good share of bodies are well formed.
        #expect(accepted > 500)
    }
}

/// `RequestParsing.isJSON`, the Content-Type check every JSON request passes through.
@Suite("Content-Type check")
struct ContentTypeTests {
    @Test("application/json in any case, with parameters and blanks around it")
    func accepted() {
        for value in [
            "application/json", "Application/JSON", "APPLICATION/JSON", "application/json; charset=utf-8",
            " application/json ", "\tapplication/json\t;charset=UTF-8", "application/json;", "application/json ;x=y;z",
        ] {
            #expect(RequestParsing.isJSON(value), "\(value)")
        }
    }

    @Test("anything else, including look-alikes that differ in one byte")
    func refused() {
        for value in [
            "", ";", "application/jsonx", "application/json-patch+json", "text/plain", "application/jso",
            "application\u{0F}json", "application/xson", "applicationjson", "application/ json", "app lication/json",
            "application/json\u{0}", "application/jsön", "application/json\n", "x; application/json",
        ] {
            #expect(!RequestParsing.isJSON(value), "\(value.debugDescription)")
        }
    }
}
