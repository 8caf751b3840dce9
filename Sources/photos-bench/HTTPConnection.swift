import Foundation

/// A minimal blocking HTTP/1.1 keep-alive client over one TCP connection to a loopback server.
///
/// The benchmark prepares each virtual user with it (session, sign-in: not measured); the
/// measured phases run on `EventLoopLoad`, which shares its socket setup, request bytes and
/// response framing.
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
        close()
    }

    /// Closes the connection (also done when it is released).
    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    private func connect() throws {
        close()
        pending.removeAll()
        fd = try Self.openSocket(host: host, port: port)
    }

    /// A connected, blocking TCP socket with Nagle off (also `EventLoopLoad`'s, made non-blocking).
    static func openSocket(host: String, port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
        guard result == 0 else {
            Glibc.close(fd)
            throw ConnectionError(description: "connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    /// The bytes of one request: `body`, if any, as JSON.
    static func requestBytes(_ method: String, _ path: String, host: String, body: String? = nil, headers: String = "") -> [UInt8] {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n\(headers)"
        if let body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            head += "Content-Length: 0\r\n\r\n"
        }
        return Array(head.utf8)
    }

    /// Sends one request and reads the whole response; reconnects once if the server closed
    /// the idle connection.
    func request(_ method: String, _ path: String, body: String? = nil, headers: String = "") throws -> Response {
        let bytes = Self.requestBytes(method, path, host: host, body: body, headers: headers)
        do {
            return try exchange(bytes)
        } catch {
            try connect()
            return try exchange(bytes)
        }
    }

    private func exchange(_ bytes: [UInt8]) throws -> Response {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ConnectionError(description: "send failed") }
            sent += n
        }
        while true {
            if let response = Self.completeResponse(pending) {
                let body = Array(pending[response.bodyStart..<response.end])
                pending.removeSubrange(0..<response.end)
                return Response(status: response.status, body: body)
            }
            try readMore()
        }
    }

    /// The status, where the body starts and where the response ends, for the response at the
    /// start of `bytes`, once all of it (head and `Content-Length` body) is there.
    static func completeResponse(_ bytes: [UInt8]) -> (status: Int, bodyStart: Int, end: Int)? {
        guard bytes.count >= 4 else { return nil }
        var index = 3
        while index < bytes.count {
            if bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
                let headEnd = index + 1
                let (status, bodyLength) = parseHead(bytes[0..<headEnd])
                return bytes.count >= headEnd + bodyLength ? (status, headEnd, headEnd + bodyLength) : nil
            }
            index += 1
        }
        return nil
    }

    /// The status code and Content-Length of a response head, read as bytes.
    private static func parseHead(_ head: ArraySlice<UInt8>) -> (Int, Int) {
        // "HTTP/1.1 200 OK\r\n": the status is bytes 9–11.
        let start = head.startIndex
        var status = 0
        for index in (start + 9)..<(start + 12) where index < head.endIndex { status = status * 10 + Int(head[index] &- 48) }
        // Find "content-length:" case-insensitively at a line start.
        let name = Array("content-length:".utf8)
        var length = 0
        var index = start
        while index < head.endIndex {
            if head[index] == 10, index + name.count < head.endIndex {
                var matches = true
                for offset in 0..<name.count where head[index + 1 + offset] | 0x20 != name[offset] | 0x20 {
                    matches = false
                    break
                }
                if matches {
                    var cursor = index + 1 + name.count
                    while cursor < head.endIndex, head[cursor] == 32 { cursor += 1 }
                    while cursor < head.endIndex, (48...57).contains(head[cursor]) {
                        length = length * 10 + Int(head[cursor] - 48)
                        cursor += 1
                    }
                    break
                }
            }
            index += 1
        }
        return (status, length)
    }

    private func readMore() throws {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw ConnectionError(description: "connection closed") }
        pending.append(contentsOf: buffer[0..<n])
    }
}
