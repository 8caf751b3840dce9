/// The `?, ?, …` of an `IN (…)` or `VALUES (…)` list, and the values to bind to it: the one
/// thing service code interpolates into SQL is placeholders, never a value.
public enum SQLPlaceholders {
    /// `count` placeholders separated by commas (`?, ?, ?`).
    public static func list(_ count: Int) -> String {
        Array(repeating: "?", count: count).joined(separator: ", ")
    }

    /// `values` as the arguments of a statement.
    public static func arguments<C: Collection>(_ values: C) -> [any DatabaseBindable] where C.Element: DatabaseBindable {
        values.map { $0 as any DatabaseBindable }
    }
}
