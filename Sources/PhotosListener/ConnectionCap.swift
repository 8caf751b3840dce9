import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections one listener has open, and the most it may — in all, and from one
/// address: a connection accepted over either cap is closed at once, which frees its descriptor.
/// Without them, connections that send nothing (each closed only after the idle timeout) could
/// take every descriptor the process has, and with them the other listener, the database's files
/// and the keys; and one address could hold every connection the listener takes.
///
/// A trusted proxy's connections are not counted per address (its clients share them; what one
/// of them holds through it — a long poll — is bounded by the forwarded address elsewhere).
public final class ConnectionCap: Sendable {
    /// The most connections open at once.
    public let limit: Int
    /// The most connections open at once from one address (0: no such cap).
    public let perAddress: Int
    private let exempt: @Sendable (String) -> Bool
    private let open = Atomic<Int>(0)
    private let byAddress = Mutex<[String: Int]>([:])

    /// A cap of `limit` connections, `perAddress` of them from one address (0: any) but from an
    /// address `exempt` says (a trusted proxy's).
    public init(limit: Int, perAddress: Int = 0, exempt: @escaping @Sendable (String) -> Bool = { _ in false }) {
        self.limit = limit
        self.perAddress = perAddress
        self.exempt = exempt
    }

    /// The connections open now.
    public var count: Int { open.load(ordering: .relaxed) }

    /// Counts one more connection from `address` (nil: unknown); false (and nothing counted)
    /// when a cap is reached.
    func enter(from address: String?) -> Bool {
        var current = open.load(ordering: .relaxed)
        while current < limit {
            let (exchanged, original) = open.compareExchange(expected: current, desired: current + 1, ordering: .acquiringAndReleasing)
            if exchanged {
                guard let address = counted(address) else { return true }
                let taken = byAddress.withLock { counts in
                    let held = counts[address, default: 0]
                    guard held < perAddress else { return false }
                    counts[address] = held + 1
                    return true
                }
                if !taken { open.subtract(1, ordering: .acquiringAndReleasing) }
                return taken
            }
            current = original
        }
        return false
    }

    /// Counts one connection from `address` less.
    func leave(from address: String?) {
        if let address = counted(address) {
            byAddress.withLock { counts in
                let held = counts[address, default: 1] - 1
                counts[address] = held > 0 ? held : nil
            }
        }
        open.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// `address` when connections from it are counted per address.
    private func counted(_ address: String?) -> String? {
        guard perAddress > 0, let address, !exempt(address) else { return nil }
        return address
    }
}

/// The first handler of each connection's HTTP part: counts it in its listener's cap while it is
/// open, or closes it at once when the cap is reached.
final class ConnectionCapHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart

    private let cap: ConnectionCap
    private var counted = false
    /// The peer's address, as counted.
    private var address: String?

    init(cap: ConnectionCap) {
        self.cap = cap
    }

    func handlerAdded(context: ChannelHandlerContext) {
        address = context.channel.remoteAddress?.ipAddress
        counted = cap.enter(from: address)
        if !counted { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if counted { cap.leave(from: address) }
        counted = false
    }
}
