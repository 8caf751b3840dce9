/// Thrown to requests that reach a closed database.
public struct DatabaseClosedError: Error, CustomStringConvertible {
    /// Creates the error.
    public init() {}
    public var description: String { "the database is closed" }
}
