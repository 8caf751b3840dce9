import Foundation

/// Prints rows as an aligned text table or as JSON.
enum Output {
    /// `1 row`, `2 rows`: a count with its noun, singular or plural (`plural` when not `noun` + s).
    static func count(_ number: Int, _ noun: String, plural: String? = nil) -> String {
        "\(number) \(number == 1 ? noun : plural ?? noun + "s")"
    }

    static func table(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(line(header))
        for row in rows { print(line(row)) }
    }

    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// One compact JSON object on its own line (for streams).
    static func jsonLine<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Progress text on stderr, no newline added.
    static func progress(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// The terminal's width when standard output is a terminal, else nil (plain output).
    static var terminalWidth: Int? {
        guard isatty(STDOUT_FILENO) == 1 else { return nil }
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return ProcessInfo.processInfo.environment["COLUMNS"].flatMap(Int.init) ?? 80
    }

    /// A line on stderr.
    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// One page of a keyset-paged listing (`--limit`, `--after`): the items, and the `--after` of the
/// next page when there is one.
struct Page<Item: Encodable>: Encodable {
    /// The JSON key of the items (`photos`, `users`).
    let name: String
    let items: [Item]
    let nextAfter: Int64?

    /// The page from `fetched`, which was asked for `limit + 1` items: the extra one only tells
    /// that there is a next page.
    init(name: String, fetched: [Item], limit: Int, id: (Item) -> Int64) {
        self.name = name
        self.items = Array(fetched.prefix(limit))
        self.nextAfter = fetched.count > limit ? items.last.map(id) : nil
    }

    /// Prints the page: JSON `{"<name>": [...], "nextAfter": N or null}`, or a table followed,
    /// when there are more, by a line on stderr naming the next page's command.
    func print(_ format: OutputOptions.Format, command: String, header: [String], cells: (Item) -> [String]) throws {
        switch format {
        case .json: try Output.json(self)
        case .table:
            Output.table(header, items.map(cells))
            if let nextAfter { Output.note("more \(name): photos-admin \(command) --after \(nextAfter)") }
        }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(items, forKey: Key(stringValue: name))
        try container.encode(nextAfter, forKey: Key(stringValue: "nextAfter"))  // explicit null on the last page
    }
}
