import Hummingbird
import NIOCore
import PhotosListener

/// The request context of the API: Hummingbird's core context and the client's address, which
/// the per-address limits key on.
struct PhotosRequestContext: RequestContext, RemoteAddressRequestContext, ClientAddressContext {
    var coreContext: CoreRequestContextStorage
    /// The peer of the request's connection (nil when there is none, as in router tests).
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        clientAddress = Self.peerAddress(remoteAddress)
    }

    /// The client's IP address as text: the peer's, or (from a trusted proxy) the one it
    /// forwarded (`ClientAddressMiddleware`); `unknown` without one.
    var clientAddress: String
}
