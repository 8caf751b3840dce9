import Foundation
import PhotosCore
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
