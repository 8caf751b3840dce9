import Foundation
import PhotosClient

/// The sessions this app started, so that `--session ID` can resume one: a `FileSessionStore`
/// file per session (`<id>.json`: its id, secret, layout and last description, mode 0600) in
/// `$XDG_STATE_HOME/photos-app/sessions` (else `~/.local/state/photos-app/sessions`). The
/// secret is the session's credential: it is kept like a password, never shown. A file named
/// by the id alone, holding only the secret, is what versions before 0.5 kept: still read.
struct KeptSessions: SessionStore {
    let directory: String
    /// The session `load()` reads: the one `--session` names (nil: a new one is started).
    var resuming: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment, resuming: String? = nil) {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        directory = state + "/photos-app/sessions"
        self.resuming = resuming
    }

    /// Whether a session `id` is kept.
    func keeps(_ id: String) -> Bool {
        FileManager.default.fileExists(atPath: file(id)) || FileManager.default.fileExists(atPath: legacyFile(id))
    }

    func load() throws -> StoredSession? {
        guard let id = resuming else { return nil }
        if let stored = try FileSessionStore(path: file(id)).load() { return stored }
        guard let data = FileManager.default.contents(atPath: legacyFile(id)),
              let secret = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !secret.isEmpty
        else {
            throw KeptSessionError(message: "no secret kept for session \(id) in \(directory) (photos-app keeps those of the sessions it started)")
        }
        return StoredSession(id: id, secret: secret, layout: .stack)
    }

    func save(_ session: StoredSession) throws {
        try FileSessionStore(path: file(session.id)).save(session)
        try? FileManager.default.removeItem(atPath: legacyFile(session.id))
    }

    func remove() throws {
        guard let id = resuming else { return }
        try FileSessionStore(path: file(id)).remove()
    }

    private func file(_ id: String) -> String { directory + "/" + id + ".json" }
    private func legacyFile(_ id: String) -> String { directory + "/" + id }
}

/// A kept session that cannot be read; its message is for people.
struct KeptSessionError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
