import Hummingbird
import NIOCore
import PhotosListener
import PhotosModel

/// The request context of the API: Hummingbird's core context and the client's address, which
/// the per-address limits key on.
struct PhotosRequestContext: RequestContext, RemoteAddressRequestContext, ClientAddressContext {
    var coreContext: CoreRequestContextStorage
    /// The peer of the request's connection (nil when there is none, as in router tests).
    let remoteAddress: SocketAddress?
    /// Completes when the request's connection has closed (the client went away): what a long
    /// poll ends at, instead of waiting on for no one.
    let connectionClosed: EventLoopFuture<Void>

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        connectionClosed = source.channel.closeFuture
        clientAddress = Self.peerAddress(remoteAddress)
    }

    /// The client's IP address as text: the peer's, or (from a trusted proxy) the one it
    /// forwarded (`ClientAddressMiddleware`); `unknown` without one.
    var clientAddress: String
    /// The session of a `/v1/sessions/{id}…` route, once `SessionAuthorization` found that the
    /// request carries its secret.
    var authorizedSessionID: String?

    /// The authorized session of a session route (set by its group's middleware).
    func authorizedSession() throws -> String {
        guard let authorizedSessionID else { throw PhotosError(.internal, "a session route ran without its authorization") }
        return authorizedSessionID
    }
}
