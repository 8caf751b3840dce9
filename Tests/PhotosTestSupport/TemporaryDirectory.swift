import Foundation

/// A fresh directory under the system's temporary directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    /// Its path.
    public let path: String

    /// Creates the directory.
    public init() throws {
        path = NSTemporaryDirectory() + "photosd-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path inside it.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Deletes it and everything in it.
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}
