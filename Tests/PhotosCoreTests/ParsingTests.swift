import DatabaseAccess
import Foundation
@testable import PhotosCore
import PhotosTestSupport
import Testing
import PhotosModel

@Suite("Prices, CSV and photo files")
struct ParsingTests {
    @Test("prices parse exactly to cents", arguments: [("2.50", 250), ("2.5", 250), ("0", 0), ("19.99", 1999), ("1000000", 100_000_000), ("0.01", 1)])
    func prices(text: String, cents: Int) throws {
        #expect(try Price.cents(from: text) == cents)
    }

    @Test("bad prices are refused", arguments: ["", "-1", "2.555", "abc", "1e3", "2.", ".5", "1,00", "10000000", "99999999999999999999"])
    func badPrices(text: String) {
        #expect(throws: PhotosError.self) { try Price.cents(from: text) }
    }

    @Test("CSV: quotes, commas, newlines, CRLF, chunk boundaries")
    func csv() throws {
        let text = "title,url,price\r\n\"Hello, \"\"world\"\"\",,1.00\r\n\"two\nlines\",http://x,2\nlast,,3"
        for chunkSize in [1, 2, 7, 1000] {
            var parser = CSVParser()
            var records: [[String]] = []
            let bytes = Array(text.utf8)
            for start in stride(from: 0, to: bytes.count, by: chunkSize) {
                try parser.feed(bytes[start..<min(start + chunkSize, bytes.count)]) { fields, _ in records.append(fields) }
            }
            try parser.finish { fields, _ in records.append(fields) }
            #expect(records == [["title", "url", "price"], ["Hello, \"world\"", "", "1.00"], ["two\nlines", "http://x", "2"], ["last", "", "3"]])
        }
    }

    @Test("photo files: malformed CSV and JSON name the place, and nothing is imported")
    func badFiles() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        func expectError(_ name: String, _ content: String, contains fragment: String) async throws {
            let path = test.directory.file(name)
            try content.write(toFile: path, atomically: true, encoding: .utf8)
            do {
                _ = try await PhotoImporter.importFile(path, into: test.database, actor: testOperator)
                Issue.record("\(name) was accepted")
            } catch let error as PhotosError {
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
        try await expectError("a.csv", "title,url,price\nok,,1\nbad,,x\n", contains: "a.csv:3: invalid price")
        try await expectError("b.csv", "name,cost\nx,1\n", contains: "header")
        try await expectError("c.csv", "title,url,price\n\"open,,1\n", contains: "unterminated")
        try await expectError("d.json", "[{\"title\": \"x\", \"price\": 2.5}]", contains: "element 1")
        try await expectError("e.json", "{not json", contains: "malformed JSON")
        try await expectError("f.txt", "x", contains: "expected a .csv or .json")
        let missing = test.directory.file("missing.csv")
        await #expect(throws: PhotosError.badRequest("\(missing): no such file")) {
            try await PhotoImporter.importFile(missing, into: test.database, actor: testOperator)
        }
        #expect(try await test.catalog.list(limit: 1).isEmpty)
        let good = test.directory.file("g.json")
        try #"[{"title": "A", "price": "1.25"}, {"title": "B", "url": "https://x.example/b.jpg", "priceCents": 300}]"#.write(toFile: good, atomically: true, encoding: .utf8)
        #expect(try await PhotoImporter.importFile(good, into: test.database, actor: testOperator) == 2)
        #expect(try await test.catalog.list(limit: 10).map(\.priceCents) == [125, 300])
    }
}

@Suite("Streaming CSV import")
struct PhotoImporterTests {
    @Test("CSV fields are stored as checked: trimmed, quoted, multi-byte, default URLs")
    func storedAsChecked() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let csv = test.directory.file("photos.csv")
        try """
            title,price,url
            Plain,1,
            "Quoted, with comma",2.5,https://x.example/a.jpg
              Padded title  ,0.99,
            "With ""quotes"" inside",10.00,http://x.example/b
            Ünïcödé Straße,3,

            """.write(toFile: csv, atomically: true, encoding: .utf8)
        let count = try await PhotoImporter.importFile(csv, into: test.database, actor: testOperator)
        #expect(count == 5)
        let stored = try await test.catalog.list(limit: 100)
        #expect(stored.map(\.title) == ["Plain", "Quoted, with comma", "Padded title", "With \"quotes\" inside", "Ünïcödé Straße"])
        #expect(stored.map(\.url) == [
            "https://photos.example.com/plain.jpg", "https://x.example/a.jpg", "https://photos.example.com/padded-title.jpg",
            "http://x.example/b", "https://photos.example.com/-n-c-d--stra-e.jpg",
        ])
        #expect(stored.map(\.priceCents) == [100, 250, 99, 1000, 300])
        let audit = try await test.database.read { try await $0.query("SELECT detail FROM audit_trail WHERE step = 'photo.added'").map { try $0.string(0) } }
        #expect(audit == [#"{"count":5}"#])
    }

    /// Titles and URLs at the edges of the rules.
    static let edgeCases: [(title: String, url: String?)] = [
        ("Plain", nil), ("  padded  ", nil), ("\tTabbed at the ends\t", nil), ("\u{00A0}no-break spaces\u{00A0}", nil),
        ("\u{85}next line at the start", nil), ("new\nline", nil), ("carriage\rreturn", nil), ("tab\tinside", nil),
        ("nul\u{0}byte", nil), ("bell\u{7}", nil), ("delete\u{7F}", nil), ("c1\u{9B}control", nil), ("zero\u{200B}width", nil),
        ("combining e\u{301}", nil), (String(repeating: "e\u{301}", count: 200), nil), (String(repeating: "e\u{301}", count: 201), nil),
        (String(repeating: "a", count: 200), nil), (String(repeating: "a", count: 201), nil), ("", nil), ("   ", nil),
        ("emoji 👍🏽", nil), ("Kelvin \u{212A}", nil),
        ("u1", "https://x.example/a.jpg"), ("u2", "HTTPS://X.example/a.jpg"), ("u3", " https://x.example/trimmed "),
        ("u4", "javascript:alert(1)"), ("u5", "/relative/path.jpg"), ("u6", "photo.jpg"), ("u7", "http://"),
        ("u8", "https:///no-host"), ("u9", "https://x.example/a b"), ("u10", "https://x.example/ü"), ("u11", "https://x.example/%zz"),
        ("u12", "https://x.example/%20ok"), ("u13", "ftp://x.example/a"), ("u14", "https://x.example/\u{0}"),
        ("u15", "https://x.example/" + String(repeating: "a", count: 1_982)), ("u16", "https://x.example/" + String(repeating: "a", count: 1_983)),
        ("u17", "https://x.example/\"><script>"), ("u18", "   "), ("u19", "http\u{1A}//x.example"), ("u20", "https://user@x.example/"),
    ]

    /// The verdict on one photo: what was stored, or the rule it broke (without the place).
    enum Verdict: Equatable {
        case stored(title: String, url: String)
        case refused(String)
    }

    static func verdict(_ body: () async throws -> Photo) async -> Verdict {
        do {
            let photo = try await body()
            return .stored(title: photo.title, url: photo.url)
        } catch let error as PhotosError {
            guard let rule = error.message.range(of: "invalid ") else { return .refused(error.message) }
            return .refused(String(error.message[rule.lowerBound...]))
        } catch {
            return .refused("\(error)")
        }
    }

    @Test("one rule set: photos add, CSV import and JSON import give every title and URL the same verdict")
    func sameVerdictOnEveryPath() async throws {
        for (index, edge) in Self.edgeCases.enumerated() {
            let test = try TestDatabase()
            defer { test.close() }
            let added = await Self.verdict {
                try await test.catalog.add(NewPhoto(title: edge.title, url: edge.url, priceCents: 100), actor: testOperator)
            }
            func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            let csv = test.directory.file("p\(index).csv")
            try Data(("title,url,price\n" + quoted(edge.title) + "," + quoted(edge.url ?? "") + ",1.00\n").utf8).write(to: URL(fileURLWithPath: csv))
            let json = test.directory.file("p\(index).json")
            var object: [String: Any] = ["title": edge.title, "price": "1.00"]
            if let url = edge.url { object["url"] = url }
            try JSONSerialization.data(withJSONObject: [object]).write(to: URL(fileURLWithPath: json))
            var results: [Verdict] = [added]
            for file in [csv, json] {
                results.append(await Self.verdict {
                    let before = try await test.catalog.list(limit: 1_000).count
                    _ = try await PhotoImporter.importFile(file, into: test.database, actor: testOperator)
                    let all = try await test.catalog.list(limit: 1_000)
                    guard all.count == before + 1, let last = all.last else { throw PhotosError.badRequest("imported \(all.count - before) photos") }
                    return last
                })
            }
            #expect(results[1] == results[0], "CSV vs photos add, case \(index) \(edge.title.debugDescription) \(edge.url.debugDescription)")
            #expect(results[2] == results[0], "JSON vs photos add, case \(index) \(edge.title.debugDescription) \(edge.url.debugDescription)")
        }
    }

    @Test("the edge cases get the verdicts the rules state")
    func edgeVerdicts() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        func verdict(_ title: String, _ url: String? = nil) async -> Verdict {
            await Self.verdict { try await test.catalog.add(NewPhoto(title: title, url: url, priceCents: 100), actor: testOperator) }
        }
        let control = Verdict.refused("invalid title: control characters (tabs, line breaks) are not allowed")
        let length = Verdict.refused("invalid title: use 1 to 200 characters")
        #expect(await verdict("  padded  ") == .stored(title: "padded", url: "https://photos.example.com/padded.jpg"))
        #expect(await verdict("\u{00A0}no-break spaces\u{00A0}") == .stored(title: "no-break spaces", url: "https://photos.example.com/no-break-spaces.jpg"))
        for title in ["new\nline", "tab\tinside", "nul\u{0}byte", "delete\u{7F}", "c1\u{9B}control"] { #expect(await verdict(title) == control, "\(title.debugDescription)") }
        #expect(await verdict(String(repeating: "e\u{301}", count: 200)) != length)
        #expect(await verdict(String(repeating: "e\u{301}", count: 201)) == length)
        #expect(await verdict(String(repeating: "a", count: 201)) == length)
        #expect(await verdict("   ") == length)
        #expect(await verdict("Kelvin \u{212A}") == .stored(title: "Kelvin \u{212A}", url: "https://photos.example.com/kelvin--.jpg"))
        for url in ["javascript:alert(1)", "/relative/path.jpg", "http://", "https:///no-host", "https://x.example/a b", "https://x.example/ü", "http\u{1A}//x.example", "https://user@x.example/"] {
            guard case .refused(let message) = await verdict("t", url) else { Issue.record("\(url.debugDescription) was accepted"); continue }
            #expect(message.hasPrefix("invalid url"))
        }
        #expect(await verdict("t", " https://x.example/trimmed ") == .stored(title: "t", url: "https://x.example/trimmed"))
    }

    @Test("a bad row anywhere leaves nothing behind, and names its line")
    func allOrNothing() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let csv = test.directory.file("photos.csv")
        var text = "title,url,price\n"
        for index in 1...25_000 { text += "Photo \(index),,1.00\n" }
        text += "Broken,,1.005\n"
        try text.write(toFile: csv, atomically: true, encoding: .utf8)
        await #expect(throws: PhotosError.badRequest("\(csv):25002: invalid price \"1.005\": expected a decimal amount like 2.50")) {
            try await PhotoImporter.importFile(csv, into: test.database, actor: testOperator)
        }
        #expect(try await test.catalog.list(limit: 1).isEmpty)
    }
}
