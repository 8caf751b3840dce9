import Foundation
import Synchronization

/// The secrets of the sessions tests create, so that a test's HTTP helpers can send
/// `Authorization: Session <secret>` on every request to `/v1/sessions/{id}…` as a real client
/// does, without every test carrying them around. Session ids are random, so one book serves every
/// test at once.
///
/// A helper learns a secret from a `201` of `POST /v1/sessions` (`learn`) and adds it to a
/// request that has no `Authorization` of its own (`authorization(for:)`). Tests of the
/// credential itself send their own header, or none with `SessionSecretBook.withoutSecret`.
public enum SessionSecretBook {
    private static let secrets = Mutex([String: String]())

    /// Keeps the secret of a session object that carries one (`id`, `sessionSecret`).
    public static func learn(_ json: [String: Any]) {
        guard let id = json["id"] as? String, let secret = json["sessionSecret"] as? String else { return }
        secrets.withLock { $0[id] = secret }
    }

    /// The secret of `sessionID`, if a helper saw it created.
    public static func secret(of sessionID: String) -> String? {
        secrets.withLock { $0[sessionID] }
    }

    /// `Session <secret>` for a path under `/v1/sessions/{id}` whose secret is known; nil for
    /// any other path (empty segments are skipped, as photosd does).
    public static func authorization(for path: String) -> String? {
        let route = path.split(separator: "?", maxSplits: 1).first ?? ""
        let segments = route.split(separator: "/")
        guard segments.count >= 3, segments[0] == "v1", segments[1] == "sessions" else { return nil }
        return secret(of: String(segments[2])).map { "Session " + $0 }
    }
}
