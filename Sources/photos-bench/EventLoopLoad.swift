import CEpoll
import Foundation

/// Drives every virtual user's keep-alive connection from one thread with `epoll`: the
/// measured phases of `photos-bench http`.
///
/// A thread per virtual user put 64 or 256 threads in the run queue of the same 2 cores as the
/// server, each woken by the kernel for every response: that cost CPU the server needed and
/// added the client's own scheduling delays to the latencies it measured. Here each user is a
/// small state machine — send its next request, read the response, record it, send the next —
/// and one thread serves them all, as `wrk` does.
final class EventLoopLoad {
    /// What one user sends next, and where its results go.
    protocol User: AnyObject {
        /// The port of the server (one of several instances) this user talks to.
        var port: Int { get }
        /// The next request, complete (head and body), as bytes.
        func nextRequest() -> [UInt8]
        /// The answer to the last request: its status and how long it took, in nanoseconds.
        func received(status: Int, nanoseconds: UInt64)
        /// The connection failed (reset, closed, unparseable).
        func failed()
    }

    private struct Slot {
        var fd: Int32
        var inbox: [UInt8] = []
        var unsent: ArraySlice<UInt8> = []
        var started: UInt64 = 0
        var busy = false
    }

    private let host: String

    init(host: String) {
        self.host = host
    }

    /// Runs `users` until `seconds` have passed: each starts its next request as soon as the
    /// previous one is answered; after the deadline no new request starts and the ones in
    /// flight finish. Returns the elapsed time.
    func run(_ users: [any User], seconds: Double) throws -> Double {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw BenchError("epoll_create1: \(String(cString: strerror(errno)))") }
        defer { close(epoll) }
        var slots: [Slot] = []
        defer { for slot in slots where slot.fd >= 0 { close(slot.fd) } }
        for index in users.indices {
            let fd = try Self.connect(host: host, port: users[index].port)
            slots.append(Slot(fd: fd))
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else {
                throw BenchError("epoll_ctl: \(String(cString: strerror(errno)))")
            }
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = start + UInt64(seconds * 1_000_000_000)
        var inFlight = 0

        func send(_ index: Int) {
            slots[index].unsent = users[index].nextRequest()[...]
            slots[index].started = DispatchTime.now().uptimeNanoseconds
            slots[index].busy = true
            inFlight += 1
            flush(index)
        }

        func flush(_ index: Int) {
            while !slots[index].unsent.isEmpty {
                let sent = slots[index].unsent.withUnsafeBytes { Glibc.send(slots[index].fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent > 0 {
                    slots[index].unsent = slots[index].unsent.dropFirst(sent)
                } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    watch(index, writable: true)
                    return
                } else {
                    fail(index)
                    return
                }
            }
            watch(index, writable: false)
        }

        func watch(_ index: Int, writable: Bool) {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | (writable ? EPOLLOUT.rawValue : 0)
            event.data.u64 = UInt64(index)
            _ = epoll_ctl(epoll, EPOLL_CTL_MOD, slots[index].fd, &event)
        }

        func fail(_ index: Int) {
            users[index].failed()
            if slots[index].busy { inFlight -= 1 }
            slots[index].busy = false
            slots[index].inbox.removeAll()
            slots[index].unsent = []
            // A fresh connection for the next request.
            _ = epoll_ctl(epoll, EPOLL_CTL_DEL, slots[index].fd, nil)
            close(slots[index].fd)
            slots[index].fd = -1
            guard let fd = try? Self.connect(host: host, port: users[index].port) else { return }
            slots[index].fd = fd
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            _ = epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
            if DispatchTime.now().uptimeNanoseconds < deadline { send(index) }
        }

        for index in users.indices { send(index) }
        var events = [epoll_event](repeating: epoll_event(), count: max(16, users.count))
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var lastProgress = DispatchTime.now().uptimeNanoseconds
        while inFlight > 0 {
            let ready = events.withUnsafeMutableBufferPointer { epoll_wait(epoll, $0.baseAddress, Int32($0.count), 1_000) }
            if ready < 0 {
                if errno == EINTR { continue }
                throw BenchError("epoll_wait: \(String(cString: strerror(errno)))")
            }
            if ready > 0 {
                lastProgress = DispatchTime.now().uptimeNanoseconds
            } else if DispatchTime.now().uptimeNanoseconds - lastProgress > 30_000_000_000 {
                throw BenchError("no response from the server for 30 s with \(inFlight) requests in flight")
            }
            for event in events.prefix(Int(ready)) {
                let index = Int(event.data.u64)
                guard slots[index].fd >= 0 else { continue }
                if event.events & EPOLLOUT.rawValue != 0 { flush(index) }
                guard event.events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(slots[index].fd, $0.baseAddress, $0.count, 0) }
                if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { continue }
                guard count > 0, slots[index].busy else {
                    fail(index)
                    continue
                }
                slots[index].inbox.append(contentsOf: buffer[0..<count])
                guard let response = HTTPConnection.completeResponse(slots[index].inbox) else { continue }
                let now = DispatchTime.now().uptimeNanoseconds
                slots[index].inbox.removeSubrange(0..<response.end)
                slots[index].busy = false
                inFlight -= 1
                users[index].received(status: response.status, nanoseconds: now - slots[index].started)
                if now < deadline { send(index) }
            }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000_000
    }

    /// A connected, non-blocking TCP socket with Nagle off.
    static func connect(host: String, port: Int) throws -> Int32 {
        let fd = try HTTPConnection.openSocket(host: host, port: port)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }
}
