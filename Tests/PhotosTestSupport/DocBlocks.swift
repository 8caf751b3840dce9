import Foundation

/// What the project's docs tell a reader to run, read back so that a test can run it as written:
/// the lines of a file (`README.md`, `docs/api.md`, …) between `<!-- NAME:start -->` and
/// `<!-- NAME:end -->`, without the code fences.
public enum DocBlocks {
    /// A doc that was expected to hold a block and does not.
    public struct Missing: Error, CustomStringConvertible {
        public let name: String
        public let file: String
        public var description: String { "no block <!-- \(name):start --> … <!-- \(name):end --> in \(file)" }
    }

    /// The block `name` of `file` (a path relative to the package root).
    public static func block(_ name: String, in file: String) throws -> String {
        let text = try String(contentsOfFile: BuiltProducts.packageRoot + "/" + file, encoding: .utf8)
        guard let start = text.range(of: "<!-- \(name):start -->"),
              let end = text.range(of: "<!-- \(name):end -->", range: start.upperBound..<text.endIndex)
        else { throw Missing(name: name, file: file) }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("```") }.joined(separator: "\n")
            .trimmingCharacters(in: .newlines)
    }
}
