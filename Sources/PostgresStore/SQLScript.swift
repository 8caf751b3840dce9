/// Splits a migration script into its statements: PostgreSQL's extended query protocol (the
/// only one postgres-nio speaks) takes one statement at a time.
///
/// Semicolons count only outside quoted text: '…' strings, "…" identifiers, $tag$…$tag$
/// bodies (plpgsql functions), -- comments and /* */ comments. Empty statements are dropped.
public enum SQLScript {
    public static func statements(_ script: String) -> [String] {
        let characters = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0
        func flush() {
            let text = String(current).trimmingWhitespace()
            if !text.isEmpty && !text.isOnlyComments { statements.append(text) }
            current = String.UnicodeScalarView()
        }
        func starts(with prefix: [Unicode.Scalar], at position: Int) -> Bool {
            position + prefix.count <= characters.count && Array(characters[position..<(position + prefix.count)]) == prefix
        }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "'", "\"":
                // A quoted string or identifier; a doubled quote stays inside it.
                current.append(character)
                index += 1
                while index < characters.count {
                    current.append(characters[index])
                    if characters[index] == character {
                        if index + 1 < characters.count && characters[index + 1] == character {
                            current.append(characters[index + 1])
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    index += 1
                }
            case "$":
                // A dollar-quoted body: $$ or $tag$, up to the same tag.
                var end = index + 1
                while end < characters.count, characters[end] == "_" || characters[end].properties.isAlphabetic { end += 1 }
                if end < characters.count, characters[end] == "$" {
                    let tag = Array(characters[index...end])
                    current.append(contentsOf: tag)
                    index = end + 1
                    while index < characters.count && !starts(with: tag, at: index) {
                        current.append(characters[index])
                        index += 1
                    }
                    if index < characters.count {
                        current.append(contentsOf: tag)
                        index += tag.count
                    }
                } else {
                    current.append(character)
                    index += 1
                }
            case "-" where starts(with: ["-", "-"], at: index):
                while index < characters.count && characters[index] != "\n" {
                    current.append(characters[index])
                    index += 1
                }
            case "/" where starts(with: ["/", "*"], at: index):
                while index < characters.count && !starts(with: ["*", "/"], at: index) {
                    current.append(characters[index])
                    index += 1
                }
                if index < characters.count {
                    current.append(contentsOf: ["*", "/"])
                    index += 2
                }
            case ";":
                flush()
                index += 1
            default:
                current.append(character)
                index += 1
            }
        }
        flush()
        return statements
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.unicodeScalars.first, first.properties.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.unicodeScalars.last, last.properties.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }

    /// True when every line is blank or a `--` comment.
    fileprivate var isOnlyComments: Bool {
        split(separator: "\n").allSatisfy { line in
            let trimmed = String(line).trimmingWhitespace()
            return trimmed.isEmpty || trimmed.hasPrefix("--")
        }
    }
}
