import Foundation

/// A minimal blocking HTTP/1.1 keep-alive client over one TCP connection to a loopback server.
///
/// The benchmark runs each virtual user on its own thread with its own connection, so a plain
/// blocking socket is the cheapest client there is: it leaves the CPU to the server under test.
final class HTTPConnection {
    private var fd: Int32 = -1
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var pending: [UInt8] = []
    let host: String
    let port: Int

    struct Response {
        var status: Int
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    struct ConnectionError: Error, CustomStringConvertible {
        let description: String
    }

    init(host: String, port: Int) throws {
        self.host = host
        self.port = port
        try connect()
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    private func connect() throws {
        if fd >= 0 { close(fd) }
        pending.removeAll()
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ConnectionError(description: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw ConnectionError(description: "connect to \(host):\(port): \(String(cString: strerror(errno)))") }
    }

    /// Sends one request and reads the whole response; reconnects once if the server closed
    /// the idle connection.
    func request(_ method: String, _ path: String, body: String? = nil, headers: String = "") throws -> Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n\(headers)"
        if let body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            head += "Content-Length: 0\r\n\r\n"
        }
        do {
            return try exchange(Array(head.utf8))
        } catch {
            try connect()
            return try exchange(Array(head.utf8))
        }
    }

    private func exchange(_ bytes: [UInt8]) throws -> Response {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ConnectionError(description: "send failed") }
            sent += n
        }
        // Headers.
        var headerEnd: Int?
        while headerEnd == nil {
            if let end = Self.find(pending, [13, 10, 13, 10]) { headerEnd = end; break }
            try readMore()
        }
        let headerBytes = pending[..<headerEnd!]
        let headerText = String(decoding: headerBytes, as: UTF8.self)
        let lines = headerText.split(separator: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var length = 0
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let bodyStart = headerEnd! + 4
        while pending.count < bodyStart + length { try readMore() }
        let body = Array(pending[bodyStart..<(bodyStart + length)])
        pending.removeFirst(bodyStart + length)
        return Response(status: status, body: body)
    }

    private func readMore() throws {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw ConnectionError(description: "connection closed") }
        pending.append(contentsOf: buffer[0..<n])
    }

    private static func find(_ haystack: [UInt8], _ needle: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index] == needle[0] {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
        }
        return nil
    }
}
