import Hummingbird
import NIOCore
import PhotosListener
import PhotosCore

/// The request context of the console: Hummingbird's core context, the client's address (what
/// the sign-in limits count) and, once `ConsoleSessionMiddleware` found it, the operator's
/// console session.
struct ConsoleRequestContext: RequestContext, RemoteAddressRequestContext, ClientAddressContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The signed-in operator's session (nil on the sign-in page and the static files).
    var session: ConsoleSession?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        clientAddress = Self.peerAddress(remoteAddress)
    }

    /// The client's IP address as text: the peer's, or (from a trusted proxy) the one it
    /// forwarded (`ClientAddressMiddleware`); `unknown` without one.
    var clientAddress: String

    /// The session, which every route behind the middleware has.
    func requireSession() throws -> ConsoleSession {
        guard let session else { throw HTTPError(.unauthorized) }
        return session
    }
}
