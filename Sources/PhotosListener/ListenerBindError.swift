import Foundation
import NIOCore
import ServiceLifecycle

/// A listener that could not take its address (the port busy, a privileged port, an address
/// this machine does not have), in one line that names the listener and the setting to change —
/// not the driver's `bind(descriptor:ptr:bytes:): Address already in use (errno: 98)`.
public struct ListenerBindError: Error, CustomStringConvertible {
    /// `API`, `console`.
    public let listener: String
    /// `host:port` it tried.
    public let address: String
    /// The settings that choose it, as an operator changes them.
    public let settings: String
    /// The system's reason ("Address already in use").
    public let reason: String

    public var description: String {
        "the \(listener) cannot listen on \(address): \(reason) (choose another with \(settings))"
    }

    /// `error` in these words when it is a failure to bind, else nil.
    public static func from(_ error: any Error, listener: String, address: String, settings: String) -> ListenerBindError? {
        guard let error = error as? IOError, [EADDRINUSE, EACCES, EADDRNOTAVAIL].contains(error.errnoCode) else { return nil }
        return ListenerBindError(listener: listener, address: address, settings: settings, reason: String(cString: strerror(error.errnoCode)))
    }
}

/// Runs a listener's application as a service, its bind failure said as a `ListenerBindError`.
public struct NamedListener<Listener: Service>: Service {
    let listener: Listener
    let name: String
    let address: String
    let settings: String

    /// `listener`, called `name` (`console`), at `address`, chosen by `settings`.
    public init(_ listener: Listener, name: String, address: String, settings: String) {
        self.listener = listener
        self.name = name
        self.address = address
        self.settings = settings
    }

    public func run() async throws {
        do {
            try await listener.run()
        } catch {
            throw ListenerBindError.from(error, listener: name, address: address, settings: settings) ?? error
        }
    }
}
