import Hummingbird
import NIOCore

/// The request context of the API: Hummingbird's core context and the client's address, which
/// the per-address limits key on.
struct PhotosRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    /// The peer of the request's connection (nil when there is none, as in router tests).
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text, the key of the per-address limits (`unknown` without one).
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
