import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections one listener has open, and the most it may: a connection accepted over
/// the cap is closed at once, which frees its descriptor. Without it, connections that send
/// nothing (each closed only after the idle timeout) could take every descriptor the process has,
/// and with them the other listener, the database's files and the keys.
public final class ConnectionCap: Sendable {
    /// The most connections open at once.
    public let limit: Int
    private let open = Atomic<Int>(0)

    /// A cap of `limit` connections.
    public init(limit: Int) {
        self.limit = limit
    }

    /// The connections open now.
    public var count: Int { open.load(ordering: .relaxed) }

    /// Counts one more connection; false (and nothing counted) when the cap is reached.
    func enter() -> Bool {
        var current = open.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = open.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Counts one connection less.
    func leave() {
        open.subtract(1, ordering: .acquiringAndReleasing)
    }
}

/// The first handler of each connection's HTTP part: counts it in its listener's cap while it is
/// open, or closes it at once when the cap is reached.
final class ConnectionCapHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let cap: ConnectionCap
    private var counted = false

    init(cap: ConnectionCap) {
        self.cap = cap
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = cap.enter()
        if !counted { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if counted { cap.leave() }
        counted = false
    }
}
