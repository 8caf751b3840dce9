/// How a session id appears in logs and error descriptions: never whole.
///
/// A session id names a session (its secret is the credential), but logs and spans travel further
/// than the database, so they never carry it whole. `logForm` is a short digest (the first 8 hex digits of its SHA-256): enough to follow one
/// session through the log, useless for acting on it.
public enum SessionIDs {
    /// `s-1a2b3c4d` for `id`.
    public static func logForm(_ id: some StringProtocol) -> String {
        "s-" + SecureToken.sha256Hex(Array(id.utf8)).prefix(8)
    }
}
