/// Thrown to requests that reach a closed database.
public struct DatabaseClosedError: Error, CustomStringConvertible {
    /// Creates the error.
    public init() {}
    public var description: String { "the database is closed" }
}

/// Thrown to requests that find a store's bound of waiting writes reached (SQLite's writer
/// queue): nothing of them ran.
public struct DatabaseOverloadedError: Error, CustomStringConvertible {
    /// The bound that was reached.
    public let queued: Int
    /// Creates the error for a bound of `queued` waiting requests.
    public init(queued: Int) { self.queued = queued }
    public var description: String { "the database writer has \(queued) requests waiting; try again shortly" }
}
