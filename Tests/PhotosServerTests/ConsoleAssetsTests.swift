import Foundation
import Mustache
@testable import PhotosConsole
import PhotosTestSupport
import Testing

@Suite("Console assets and forms")
struct ConsoleAssetsTests {
    static let directory = BuiltProducts.packageRoot + "/Sources/PhotosConsole"

    @Test("photosd carries exactly the console's templates and files, byte for byte (run scripts/embed-console-assets)")
    func embeddedEqualFiles() throws {
        for (folder, embedded, suffix) in [("Templates", EmbeddedAssets.templates, ".mustache"), ("Assets", EmbeddedAssets.files, "")] {
            let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory + "/" + folder).sorted()
            #expect(embedded.keys.sorted() == names.map { String($0.dropLast(suffix.count)) }.sorted(), "\(folder)")
            for name in names {
                let text = try String(contentsOfFile: Self.directory + "/\(folder)/\(name)", encoding: .utf8)
                #expect(embedded[String(name.dropLast(suffix.count))] == text, "\(folder)/\(name) differs from its embedded copy")
            }
        }
    }

    @Test("every template parses; the pages escape what they show")
    func templatesEscape() throws {
        let pages = try ConsolePages()
        let html = pages.library.render(["heading": "<script>x</script>", "message": "\"quoted\" & <b>", "back": "/console"], withTemplate: "message") ?? ""
        #expect(html.contains("&lt;script&gt;x&lt;/script&gt;"))
        #expect(!html.contains("<script>"))
        #expect(html.contains("&quot;quoted&quot; &amp; &lt;b&gt;"))
    }

    @Test("forms: percent and plus decoding, the first of a repeated field, a CSRF token compared whole")
    func forms() throws {
        #expect(ConsoleForm.parse("name=otto+k&password=a%26b%3Dc&name=other") == ["name": "otto k", "password": "a&b=c"])
        #expect(ConsoleForm.parse("flag&empty=") == ["flag": "", "empty": ""])
        #expect(ConstantTime.equal("abc", "abc"))
        #expect(!ConstantTime.equal("abc", "abd"))
        #expect(!ConstantTime.equal("abc", "abcd"))
    }

    @Test("nil values are left out, not shown as 'nil'")
    func nilsLeftOut() {
        let value: String? = nil
        let cleaned = ConsolePages.withoutNils(["a": value as Any, "b": "x", "c": [["d": value as Any]]]) as? [String: Any]
        #expect(cleaned?["a"] == nil)
        #expect(cleaned?["b"] as? String == "x")
        #expect((cleaned?["c"] as? [[String: Any]])?.first?["d"] == nil)
    }
}
