import Synchronization

/// Rewrites the `?` placeholders services write (SQLite's) into PostgreSQL's `$1, $2, …`,
/// leaving `?` inside quoted strings, quoted names and comments alone. Statements are a fixed
/// set of literals, so each is rewritten once and remembered.
enum PostgresPlaceholders {
    private static let cache = Mutex<[String: String]>([:])
    /// Past this many distinct statements the cache stops growing (ad-hoc SQL is not cached).
    private static let cacheLimit = 2_048

    /// `sql` with its placeholders numbered.
    static func rewrite(_ sql: String) -> String {
        if let cached = cache.withLock({ $0[sql] }) { return cached }
        let rewritten = number(sql)
        cache.withLock { if $0.count < cacheLimit { $0[sql] = rewritten } }
        return rewritten
    }

    /// `?` becomes `$k` for the k-th plain `?`; SQLite's numbered `?N` becomes `$N`.
    static func number(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        guard bytes.contains(UInt8(ascii: "?")) else { return sql }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 16)
        var plain = 0
        var quote: UInt8?  // ' or " while inside one (a doubled quote closes and reopens)
        var lineComment = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if lineComment {
                if byte == UInt8(ascii: "\n") { lineComment = false }
            } else if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                quote = byte
            } else if byte == UInt8(ascii: "-"), index < bytes.count, bytes[index] == UInt8(ascii: "-") {
                lineComment = true
            } else if byte == UInt8(ascii: "?") {
                output.append(UInt8(ascii: "$"))
                if index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                    continue  // ?N: its digits follow as they are
                }
                plain += 1
                output += Array(String(plain).utf8)
                continue
            }
            output.append(byte)
        }
        return String(decoding: output, as: UTF8.self)
    }
}
