/// A bearer token about to be issued, chosen before anything is decided (its id included), so
/// that a pure decision can name it: the session's state and the `auth.signIn` step carry its
/// id, and the write stores exactly it. Only `tokenHash` is ever stored; `token` is shown once.
public struct TokenGrant: Sendable, Equatable {
    /// Its row id in `tokens`: random, below 2^53 (exact in any JSON reader).
    public var id: Int64
    /// The bearer token in clear: returned to the client once, never stored or logged.
    public var token: String
    /// Hex SHA-256 of `token`: what `tokens.token_hash` stores.
    public var tokenHash: String
    /// When it is issued (the action's time).
    public var issuedAt: String
    /// When it expires.
    public var expiresAt: String

    /// Creates a grant.
    public init(id: Int64, token: String, tokenHash: String, issuedAt: String, expiresAt: String) {
        self.id = id
        self.token = token
        self.tokenHash = tokenHash
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}
