import HTTPTypes
import Hummingbird
import NIOCore

/// A request context that knows its connection's peer and the client's address: the peer's,
/// unless `ClientAddressMiddleware` found it forwarded by a trusted proxy.
public protocol ClientAddressContext: RequestContext {
    /// The peer of the request's connection (nil when there is none, as in router tests).
    var remoteAddress: SocketAddress? { get }
    /// The client's IP address as text: what the per-address limits key on, the sign-in's
    /// trusted-address rule compares, and the request log shows.
    var clientAddress: String { get set }
}

extension ClientAddressContext {
    /// The peer's address as text (`unknown` without one): the client's, until a trusted proxy
    /// says otherwise.
    public static func peerAddress(_ remote: SocketAddress?) -> String { remote?.ipAddress ?? "unknown" }
}

/// Takes the client's address from `Forwarded` / `X-Forwarded-For` when the request's peer is a
/// trusted proxy (`server.trustedProxies`), and from the peer otherwise. It runs first, so that
/// everything after it — the limits, the sign-in, the log — sees the same address.
public struct ClientAddressMiddleware<Context: ClientAddressContext>: RouterMiddleware {
    let proxies: TrustedProxies

    /// The middleware for `proxies` (none: the peer is always the client).
    public init(proxies: TrustedProxies) {
        self.proxies = proxies
    }

    public func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        guard !proxies.ranges.isEmpty, let peer = context.remoteAddress?.ipAddress else { return try await next(request, context) }
        var context = context
        context.clientAddress = proxies.clientAddress(
            peer: peer, forwarded: request.headers[values: .forwarded], xForwardedFor: request.headers[values: .xForwardedFor])
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    /// RFC 7239.
    static let forwarded = Self("Forwarded")!
    /// The de-facto header most proxies set.
    static let xForwardedFor = Self("X-Forwarded-For")!
}
