import DatabaseAccess

/// Reads by position, for the tests' own one-off queries (`SELECT count(*) FROM …`), which
/// check the database from outside and name no columns. The code reads by name only (`Row`'s
/// own members); these keep the same rules by reading a one-column row of the value.
extension Row {
    private func cell(_ index: Int) -> Row { Row(columns: ["column \(index)"], values: [values[index]]) }

    public func int64(_ index: Int) throws -> Int64 { try cell(index).int64("column \(index)") }
    public func int(_ index: Int) throws -> Int { try cell(index).int("column \(index)") }
    public func string(_ index: Int) throws -> String { try cell(index).string("column \(index)") }
    public func blob(_ index: Int) throws -> [UInt8] { try cell(index).blob("column \(index)") }
    public func optionalInt64(_ index: Int) -> Int64? { (try? cell(index).optionalInt64("column \(index)")) ?? nil }
    public func optionalInt(_ index: Int) -> Int? { (try? cell(index).optionalInt("column \(index)")) ?? nil }
    public func optionalString(_ index: Int) -> String? { (try? cell(index).optionalString("column \(index)")) ?? nil }

    /// The raw value at `index`.
    public subscript(index: Int) -> DatabaseValue { values[index] }
}
