import Foundation
import PhotosModel

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

    /// A JSON text (written by its type's own writer) as `json(_:)` prints a value: indented,
    /// keys sorted.
    static func json(text: String) throws {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: data, as: UTF8.self))
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

    /// A page of `items` under `name` whose next page is `nextAfter` (nil: none, or the listing
    /// has no cursor).
    init(name: String, items: [Item], nextAfter: Int64? = nil) {
        self.name = name
        self.items = items
        self.nextAfter = nextAfter
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

/// An audit row as `--format json` prints it: the `audit_trail` columns in camelCase, with
/// `detail` a JSON object (not a string of JSON inside the JSON).
struct AuditRowOutput: Encodable {
    let row: AuditRow

    enum CodingKeys: String, CodingKey { case sessionId, seq, at, actor, username, coordinator, step, screen, detail }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(row.sessionId, forKey: .sessionId)
        try container.encode(row.seq, forKey: .seq)
        try container.encode(row.at, forKey: .at)
        try container.encode(row.actor, forKey: .actor)
        try container.encodeIfPresent(row.username, forKey: .username)
        try container.encodeIfPresent(row.coordinator, forKey: .coordinator)
        try container.encode(row.step, forKey: .step)
        try container.encodeIfPresent(row.screen, forKey: .screen)
        // Details are flat objects of strings, numbers, booleans and nulls; one that is not
        // (never written by photosd) is printed as the text it is.
        if let object = try? JSONDecoder().decode([String: DetailValue].self, from: Data(row.detail.utf8)) {
            try container.encode(object, forKey: .detail)
        } else {
            try container.encode(row.detail, forKey: .detail)
        }
    }

    /// One value of a detail object.
    enum DetailValue: Codable {
        case string(String), int(Int64), double(Double), bool(Bool), null

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let flag = try? container.decode(Bool.self) { self = .bool(flag) }
            else if let number = try? container.decode(Int64.self) { self = .int(number) }
            else if let number = try? container.decode(Double.self) { self = .double(number) }
            else { self = .string(try container.decode(String.self)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let text): try container.encode(text)
            case .int(let number): try container.encode(number)
            case .double(let number): try container.encode(number)
            case .bool(let flag): try container.encode(flag)
            case .null: try container.encodeNil()
            }
        }
    }
}
