/// One thing a `NavigationDriver` tells its logging hook: a retry, a change feed that waits
/// before it polls again or ends, an answer it could not read, a session store that failed.
///
/// The hook is a closure rather than swift-log so that an app depending on PhotosClient
/// resolves no package beyond the client's three; forwarding it to `os.Logger` or swift-log is
/// one line (docs/client.md shows both). The driver never puts a secret, a password or a token
/// in a message.
public struct NavigationLog: Sendable, CustomStringConvertible {
    /// How much it matters.
    public enum Level: String, Sendable, Hashable {
        /// A retry that may well succeed (a `503`, a lost connection).
        case info
        /// Something the app may have to act on (a store that cannot be written, an answer this
        /// client cannot read, a change feed that ended).
        case warning
    }

    /// How much it matters.
    public var level: Level
    /// The request it is about (`createSession`, `act`, `getSession`, `sessionChanges`, …), or
    /// `store` for the session store.
    public var operation: String
    /// What happened, in a few words for people.
    public var message: String
    /// The error behind it, if any.
    public var error: NavigationError?

    public init(level: Level, operation: String, message: String, error: NavigationError? = nil) {
        self.level = level
        self.operation = operation
        self.message = message
        self.error = error
    }

    /// `[info] act: 503, trying again in 1.1 s (attempt 2 of 4)`.
    public var description: String { "[\(level.rawValue)] \(operation): \(message)" }
}
