import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The proxies whose word on a client's address is taken (`server.trustedProxies`): addresses
/// and CIDR ranges. From a trusted peer, the client is the right-most address of the one
/// forwarding header configured (`server.forwardedHeader`: `X-Forwarded-For`, or `Forwarded:
/// for=`) that is not itself a trusted proxy; from any other peer it is ignored, so a client
/// cannot choose the address its limits count. The other header is never read: a proxy that sets
/// one passes the client's own copy of the other through untouched.
public struct TrustedProxies: Sendable, Equatable {
    /// The header a trusted proxy names the client in.
    public enum Header: String, Sendable, Equatable {
        case xForwardedFor = "X-Forwarded-For"
        case forwarded = "Forwarded"

        /// `X-Forwarded-For` or `Forwarded`, in any case.
        public init?(configured text: String) {
            switch text.lowercased() {
            case "x-forwarded-for": self = .xForwardedFor
            case "forwarded": self = .forwarded
            default: return nil
            }
        }
    }

    /// One address or range.
    public struct Range: Sendable, Equatable, CustomStringConvertible {
        /// 4 bytes (IPv4) or 16 (IPv6).
        let bytes: [UInt8]
        let prefix: Int

        /// `10.0.0.0/8`, `192.0.2.7`, `fd00::/8`, `::1`. Nil for anything else.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let bytes = TrustedProxies.bytes(of: String(parts[0])) else { return nil }
            let width = bytes.count * 8
            var prefix = width
            if parts.count == 2 {
                guard let bits = Int(parts[1]), (0...width).contains(bits) else { return nil }
                prefix = bits
            }
            self.bytes = bytes
            self.prefix = prefix
        }

        /// True when `address` (its bytes) is in the range.
        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefix
            for index in bytes.indices where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                remaining -= bits
            }
            return true
        }

        public var description: String {
            let address = bytes.count == 4 ? bytes.map(String.init).joined(separator: ".") : TrustedProxies.text(ipv6: bytes)
            return prefix == bytes.count * 8 ? address : "\(address)/\(prefix)"
        }
    }

    /// The ranges, in the order given.
    public let ranges: [Range]
    /// The header the client is read from.
    public let header: Header

    /// No proxy is trusted: the client is the TCP peer.
    public static let none = TrustedProxies(ranges: [])

    /// The proxies `ranges`, naming the client in `header`.
    public init(ranges: [Range], header: Header = .xForwardedFor) {
        self.ranges = ranges
        self.header = header
    }

    /// Parses `entries` (each an address or a CIDR range; blanks skipped). Throws naming the first
    /// entry that is neither.
    public init(parsing entries: [String], header: Header = .xForwardedFor) throws {
        self.header = header
        var ranges: [Range] = []
        for entry in entries {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let range = Range(trimmed) else { throw InvalidEntry(entry: trimmed) }
            ranges.append(range)
        }
        self.ranges = ranges
    }

    /// An entry that is neither an address nor a CIDR range.
    public struct InvalidEntry: Error, CustomStringConvertible {
        public let entry: String
        public var description: String { "\"\(entry.prefix(64))\" is not an IP address or a CIDR range (like 10.0.0.0/8)" }
    }

    /// True when `address` is one of the trusted proxies.
    public func trusts(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.bytes(of: address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// Hops read from the forwarding headers at most: a longer chain is cut at the right end.
    static let maxHops = 32

    /// The client's address for a request from `peer` carrying `forwarded` (the `Forwarded`
    /// header's values) and `xForwardedFor` (the `X-Forwarded-For` header's values): `peer`
    /// unless it is trusted; else, walking the hops of `header` from the right, the first that
    /// is not a trusted proxy. A hop that is not an address (`unknown`, an obfuscated name) ends
    /// the walk at the trusted proxy that reported it.
    public func clientAddress(peer: String, forwarded: [String], xForwardedFor: [String]) -> String {
        guard trusts(peer) else { return peer }
        let hops = switch header {
        case .xForwardedFor: Self.hops(xForwardedFor: xForwardedFor)
        case .forwarded: Self.hops(forwarded: forwarded)
        }
        var client = peer
        for hop in hops.reversed() {
            guard let bytes = Self.bytes(of: hop) else { return client }
            client = Self.canonical(bytes)
            if !ranges.contains(where: { $0.contains(bytes) }) { return client }
        }
        return client
    }

    // MARK: Headers

    /// The `for=` values of `Forwarded` (RFC 7239), left to right, without quotes, brackets or port.
    static func hops(forwarded values: [String]) -> [String] {
        var hops: [String] = []
        for value in values {
            for element in value.split(separator: ",") {
                for pair in element.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else { continue }
                    hops.append(node(String(parts[1])))
                }
            }
        }
        return Array(hops.suffix(maxHops))
    }

    /// The addresses of `X-Forwarded-For`, left to right.
    static func hops(xForwardedFor values: [String]) -> [String] {
        Array(values.flatMap { $0.split(separator: ",").map { node(String($0)) } }.suffix(maxHops))
    }

    /// A node as an address: `"[2001:db8::1]:4711"` → `2001:db8::1`, `192.0.2.1:80` → `192.0.2.1`.
    static func node(_ raw: String) -> String {
        var text = raw.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
        if text.hasPrefix("[") {
            guard let end = text.firstIndex(of: "]") else { return text }
            return String(text[text.index(after: text.startIndex)..<end])
        }
        // One colon: an IPv4 address with a port. More: IPv6 without brackets (no port).
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") { return String(text[..<colon]) }
        return text
    }

    // MARK: Addresses

    /// The bytes of an IPv4 or IPv6 address (an IPv4-mapped IPv6 address as its IPv4 bytes).
    static func bytes(of text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        // The bytes in network order, as `inet_pton` writes an `in_addr` / `in6_addr`.
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return v4 }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, text, &bytes) == 1 else { return nil }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12..<16]) }
        return bytes
    }

    /// An address in one spelling, so that one client is one key for the limits.
    static func canonical(_ bytes: [UInt8]) -> String {
        bytes.count == 4 ? bytes.map(String.init).joined(separator: ".") : text(ipv6: bytes)
    }

    static func text(ipv6 bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return "" }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, bytes, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
