/// Nearest names for what a person mistyped: a setting in a config file, a subcommand.
public enum Spelling {
    /// Levenshtein distance, case-insensitive.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The name of `names` nearest to `word`, when it is near enough to be what was meant (at
    /// most `slack` edits, or a third of the word's length if that is more).
    public static func nearest(to word: String, in names: [String], slack: Int = 2) -> String? {
        guard let nearest = names.min(by: { distance(word, $0) < distance(word, $1) }) else { return nil }
        return distance(word, nearest) <= max(slack, word.count / 3) ? nearest : nil
    }
}
