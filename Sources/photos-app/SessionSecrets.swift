import Foundation

/// The secrets of the sessions this app started, so that `--session ID` can resume one: a file
/// per session (named by its id, holding its secret, mode 0600) in
/// `$XDG_STATE_HOME/photos-app/sessions` (else `~/.local/state/photos-app/sessions`). The
/// secret is the session's credential: it is kept like a password, never shown.
struct KeptSessions {
    let directory: String

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        directory = state + "/photos-app/sessions"
    }

    /// Keeps `secret` for `sessionID`.
    func keep(_ secret: String, for sessionID: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = file(sessionID)
        guard FileManager.default.createFile(atPath: path, contents: Data(secret.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw KeptSessionError(message: "cannot keep the session's secret in \(path)")
        }
    }

    /// The secret kept for `sessionID`.
    func secret(for sessionID: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: file(sessionID)),
              let secret = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !secret.isEmpty
        else {
            throw KeptSessionError(message: "no secret kept for session \(sessionID) in \(directory) (photos-app keeps those of the sessions it started)")
        }
        return secret
    }

    private func file(_ sessionID: String) -> String { directory + "/" + sessionID }
}

/// A kept session that cannot be written or read; its message is for people.
struct KeptSessionError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
