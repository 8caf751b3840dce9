import Foundation
@testable import PhotosCore
import PhotosTestSupport
import Testing

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

    @Test("photo files: malformed CSV and JSON name the place")
    func badFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        func expectError(_ name: String, _ content: String, contains fragment: String) throws {
            let path = directory.file(name)
            try content.write(toFile: path, atomically: true, encoding: .utf8)
            do {
                _ = try PhotoFile.read(path: path)
                Issue.record("\(name) was accepted")
            } catch let error as PhotosError {
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
        try expectError("a.csv", "title,url,price\nok,,1\nbad,,x\n", contains: "a.csv:3: invalid price")
        try expectError("b.csv", "name,cost\nx,1\n", contains: "header")
        try expectError("c.csv", "title,url,price\n\"open,,1\n", contains: "unterminated")
        try expectError("d.json", "[{\"title\": \"x\", \"price\": 2.5}]", contains: "element 1")
        try expectError("e.json", "{not json", contains: "malformed JSON")
        try expectError("f.txt", "x", contains: "expected a .csv or .json")
        #expect(throws: PhotosError.badRequest("\(directory.file("missing.csv")): no such file")) { try PhotoFile.read(path: directory.file("missing.csv")) }
        let good = directory.file("g.json")
        try #"[{"title": "A", "price": "1.25"}, {"title": "B", "url": "https://x.example/b.jpg", "priceCents": 300}]"#.write(toFile: good, atomically: true, encoding: .utf8)
        #expect(try PhotoFile.read(path: good).map(\.priceCents) == [125, 300])
    }
}

@Suite("Streaming CSV import")
struct PhotoImporterTests {
    @Test("the streaming importer stores exactly what the catalogue's own validation would")
    func sameAsCatalogue() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let csv = test.directory.file("photos.csv")
        try """
            title,price,url
            Plain,1,
            "Quoted, with comma",2.5,https://x.example/a.jpg
              Padded title  ,0.99,
            "Multi
            line",10.00,http://x.example/b
            Ünïcödé Straße,3,

            """.write(toFile: csv, atomically: true, encoding: .utf8)
        let expected = try PhotoFile.read(path: csv)
        let count = try await PhotoImporter.importFile(csv, into: test.database, actor: testOperator)
        #expect(count == expected.count)
        let stored = try await test.catalog.list(limit: 100)
        #expect(stored.map(\.title) == expected.map(\.title))
        #expect(stored.map(\.url) == expected.map { $0.url ?? "" })
        #expect(stored.map(\.priceCents) == expected.map(\.priceCents))
        let audit = try await test.database.read { try $0.query("SELECT detail FROM audit_trail WHERE step = 'photo.added'").map { $0.string(0) } }
        #expect(audit == [#"{"count":5}"#])
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

    @Test("byte-level prices agree with Price.cents", arguments: ["0", "1", "2.5", "2.50", "19.99", "1000000", "1000000.01", "0.001", "-1", "", " 3 ", "1.", ".5", "1,0", "9999999", "12345678", "abc"])
    func prices(text: String) {
        #expect(ImportField.cents(Array(text.utf8)) == (try? Price.cents(from: text)))
    }
}
