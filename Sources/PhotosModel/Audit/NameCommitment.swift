/// How the audit chain holds a person's name without holding it: `sha256(salt ":" name)`, with a
/// salt of 32 random bytes kept per user (`users.name_salt`).
///
/// A user's `user.created` step carries the commitment in its hashed detail (`nameCommitment`);
/// `audit verify` opens it with the salt and the name in `users`, so a renamed user is caught.
/// Erasure deletes the salt and the name: the commitment stays in the chain, and without the
/// salt it cannot be opened, nor guessed from a list of likely names.
public enum NameCommitment {
    /// The detail field of `user.created` that holds it.
    public static let detailField = "nameCommitment"

    /// The commitment to `name` under `salt`.
    public static func of(name: String, salt: String) -> String {
        SecureToken.sha256Hex(Array("\(salt):\(name)".utf8))
    }

    /// A new salt.
    public static func newSalt() -> String {
        SecureToken.random(byteCount: 32)
    }

    /// The name an erased user's row keeps (`users.username` is NOT NULL and UNIQUE): not a valid
    /// username (`:` is refused), so no one can sign up or sign in as it.
    public static func erasedName(userID: Int64) -> String {
        "erased:\(userID)"
    }
}
