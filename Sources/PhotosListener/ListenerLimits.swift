import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// What every listener photosd opens (the API, the console, any later one) bounds, in one place:
/// the connection guard (`RequestGuardHandler`: a deadline for each request's arrival, bodies
/// refused from their declared length, malformed requests answered and closed, HTTP/1.0 answered
/// as HTTP/1.0 and closed, paths with empty segments normalised before routing and logging), the
/// idle timeout, and caps on the connections open at once, in all and from one address
/// (`ConnectionCap`).
public struct ListenerLimits: Sendable {
    /// What the listener is, in log lines and errors: `API`, `console`.
    public var name: String
    /// The largest request body accepted (`server.maxBodyBytes`).
    public var maxBodyBytes: Int
    /// The longest a request may take to arrive, head and body (`server.requestTimeoutSeconds`).
    public var requestTimeoutSeconds: Int
    /// A connection that completes no request part for this long is closed (`server.idleTimeoutSeconds`).
    public var idleTimeoutSeconds: Int
    /// The most connections open at once (`server.maxConnections`, `console.maxConnections`).
    public var maxConnections: Int
    /// The most open at once from one address (`server.maxConnectionsPerAddress`; 0: no such
    /// cap), but from `trustedProxies`.
    public var maxConnectionsPerAddress: Int = 0
    /// The proxies whose connections are not counted per address.
    public var trustedProxies: TrustedProxies = .none
    /// Header fields every answer of the listener carries, the guard's own too (the API's
    /// `Photos-API-Version`): a client reads them on a `413` as on any answer.
    public var answerHeaders: HTTPFields

    /// Limits for one listener.
    public init(
        name: String, maxBodyBytes: Int, requestTimeoutSeconds: Int, idleTimeoutSeconds: Int, maxConnections: Int, answerHeaders: HTTPFields = [:],
        maxConnectionsPerAddress: Int = 0, trustedProxies: TrustedProxies = .none
    ) {
        self.answerHeaders = answerHeaders
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.trustedProxies = trustedProxies
        self.name = name
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.maxConnections = maxConnections
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with every guard of `limits`: the one way photosd builds a listener's server.
    /// Each call makes the listener's own connection cap.
    public static func guarded(_ limits: ListenerLimits) -> HTTPServerBuilder {
        let proxies = limits.trustedProxies
        let cap = ConnectionCap(limit: limits.maxConnections, perAddress: limits.maxConnectionsPerAddress, exempt: { proxies.trusts($0) })
        return .http1(configuration: .init(
            additionalChannelHandlers: [
                ConnectionCapHandler(cap: cap),
                RequestGuardHandler(
                    maxBodyBytes: limits.maxBodyBytes, requestTimeout: .seconds(Int64(limits.requestTimeoutSeconds)), answerHeaders: limits.answerHeaders),
            ],
            idleTimeout: .seconds(Int64(limits.idleTimeoutSeconds))))
    }
}
