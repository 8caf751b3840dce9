import Foundation

/// What a `SessionStore` keeps of a session: enough to attach to it again after the app
/// restarts (its id and secret), the layout to start over in, and the session as it was when
/// kept (to show something before the network answers; `resume()` reads it again).
public struct StoredSession: Codable, Hashable, Sendable {
    /// The session's id.
    public var id: String
    /// The session's secret, its credential (shown once, when it was created).
    public var secret: String
    /// The layout it was started in (`startOver()` starts the next one in it too).
    public var layout: Layout
    /// The session as the driver last saw it (kept at `start`, `attach`, `resume`, `startOver`
    /// and after every answer that brought a newer version: an action, a change from the feed,
    /// a refresh): what an app launched offline can show; nil when its answer could not be read.
    public var session: Session?

    /// A session to keep.
    public init(id: String, secret: String, layout: Layout, session: Session? = nil) {
        self.id = id
        self.secret = secret
        self.layout = layout
        self.session = session
    }
}

/// Where a `NavigationDriver` keeps its session between launches of the app: written when a
/// session is started, attached or started over, and after each answer that changed it; read
/// by `NavigationDriver.resume()`. One
/// session per store. The secret in it is a credential: keep it as you would a password
/// (`KeychainSessionStore` on Apple's systems, `FileSessionStore` with mode 0600 elsewhere).
public protocol SessionStore: Sendable {
    /// The session kept, if any.
    func load() throws -> StoredSession?
    /// Keeps `session`, replacing what was kept.
    func save(_ session: StoredSession) throws
    /// Forgets the session kept.
    func remove() throws
}

/// Why a `SessionStore` could not read or write; its message is for people (it never holds the
/// secret).
public struct SessionStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A `SessionStore` in one JSON file, readable and writable by its owner only (mode 0600, in a
/// directory it creates with mode 0700), replaced atomically on each save: what photos-app
/// uses, and what an app uses where there is no Keychain.
public struct FileSessionStore: SessionStore {
    /// The file.
    public let path: String

    /// A store in the file at `path` (its directory is created when the first session is saved).
    public init(path: String) {
        self.path = path
    }

    public func load() throws -> StoredSession? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw SessionStoreError("cannot read the session kept in \(path)") }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: data)
        } catch {
            throw SessionStoreError("the session kept in \(path) cannot be read: \(error)")
        }
    }

    public func save(_ session: StoredSession) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(session) } catch { throw SessionStoreError("cannot encode the session to keep: \(error)") }
        // Written beside the file with mode 0600 from the start (never readable by others, not
        // even for a moment), then renamed over it: a crash leaves the old file or the new one.
        let temporary = path + ".\(UUID().uuidString).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw SessionStoreError("cannot write the session to keep in \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            throw SessionStoreError("cannot keep the session in \(path): \(reason)")
        }
    }

    public func remove() throws {
        guard FileManager.default.fileExists(atPath: path) else { return }
        do { try FileManager.default.removeItem(atPath: path) } catch { throw SessionStoreError("cannot remove the session kept in \(path): \(error)") }
    }
}

#if canImport(Security)
import Security

/// A `SessionStore` in the Keychain: one generic-password item (`service`, `account`), readable
/// after the device's first unlock and never synced or backed up to another device.
public struct KeychainSessionStore: SessionStore {
    public let service: String
    public let account: String

    /// A store in the Keychain item `service`/`account` (by default the app's bundle id and
    /// `photosd-session`).
    public init(service: String = Bundle.main.bundleIdentifier ?? "PhotosClient", account: String = "photosd-session") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public func load() throws -> StoredSession? {
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var item: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw SessionStoreError("the Keychain refused to read the session (OSStatus \(status))") }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: data)
        } catch {
            throw SessionStoreError("the session kept in the Keychain cannot be read: \(error)")
        }
    }

    public func save(_ session: StoredSession) throws {
        let data: Data
        do { data = try JSONEncoder().encode(session) } catch { throw SessionStoreError("cannot encode the session to keep: \(error)") }
        let update = SecItemUpdate(query as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        if update == errSecSuccess { return }
        guard update == errSecItemNotFound else { throw SessionStoreError("the Keychain refused to keep the session (OSStatus \(update))") }
        var item = query
        item[kSecValueData as String] = data
        item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let added = SecItemAdd(item as CFDictionary, nil)
        guard added == errSecSuccess else { throw SessionStoreError("the Keychain refused to keep the session (OSStatus \(added))") }
    }

    public func remove() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw SessionStoreError("the Keychain refused to remove the session (OSStatus \(status))") }
    }
}
#endif
