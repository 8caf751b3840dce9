import Foundation

/// The rules for usernames and passwords, the same on every path that takes them (the API, a
/// session's `submit`, `photos-admin users add`, the console).
public enum Credentials {
    /// Usernames: 1–64 characters from letters, digits, `.`, `_` and `-`.
    public static func validate(username: String) throws {
        guard (1...64).contains(username.count),
              username.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) })
        else {
            throw PhotosError.badRequest("invalid username: use 1 to 64 letters, digits, '.', '_' or '-'")
        }
    }

    /// The most bytes of a password bcrypt reads: it ignores the rest.
    public static let maxPasswordBytes = 72

    /// New passwords: 8–72 bytes of UTF-8 without a NUL. bcrypt reads a C string and no further
    /// than 72 bytes, so a NUL or a 73rd byte would be silently dropped (`abcd\0efgh` would be
    /// the 4-byte password `abcd`); both are refused instead, here and at every sign-in.
    public static func validate(password: String) throws {
        try validateForSignIn(password: password)
        guard password.utf8.count >= 8 else {
            throw PhotosError.badRequest("invalid password: use 8 to \(maxPasswordBytes) bytes")
        }
    }

    /// A password offered at sign-in (API, session `submit`): refused with `bad_request` when
    /// bcrypt would not read all of it (a NUL, more than 72 bytes), so that no password signs in
    /// by a prefix.
    public static func validateForSignIn(password: String) throws {
        guard !password.utf8.contains(0) else {
            throw PhotosError.badRequest("invalid password: it must not contain a NUL character")
        }
        guard password.utf8.count <= maxPasswordBytes else {
            throw PhotosError.badRequest("invalid password: at most \(maxPasswordBytes) bytes")
        }
    }

    /// The detail of an `auth.signInFailed` step: `attemptedUserId` when the name is an existing
    /// user's (`knownUserID`), else only `"unknownUser": true`. The text typed as a username is
    /// never recorded: when no user has it, it may be a password typed into the wrong field; when
    /// one has, the row names them by id, so that erasing them leaves no name in the trail (rows
    /// from before migration 0011 said `attemptedUsername`). `limit` adds what the sign-in limits
    /// say of a refusal (which limit; how many went unrecorded before it).
    public static func refusedSignInDetail(knownUserID: Int64?, reason: String?, limit: JSONObject = [:]) -> JSONObject {
        var detail = limit
        if let knownUserID { detail["attemptedUserId"] = .int(knownUserID) } else { detail["unknownUser"] = true }
        if let reason { detail["reason"] = .string(reason) }
        return detail
    }

}
