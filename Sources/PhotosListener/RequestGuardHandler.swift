import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Bounds what one request may take of a connection, below the router:
///
/// - **A declared body over the limit** (`Content-Length` above `server.maxBodyBytes`) is answered
///   `413 payload_too_large` as soon as the head arrives; the request never reaches a route.
/// - **A deadline for the whole request** (`server.requestTimeoutSeconds`), from its first byte to
///   the end of its body: a client that trickles a head or a body (slowloris) is answered
///   `408 request_timeout` when its head had arrived, and the connection is closed either way.
///   Time spent answering a request that has fully arrived is not counted.
/// - **A request answered before its body was read** (the `413`s, or a route that refuses early)
///   gets `Connection: close`; once the answer is written, the rest of the body is read and
///   dropped — at most `drainLimit` bytes for at most `drainTimeout` — and the connection is
///   closed. Without that, a client that sends its whole body before reading the answer
///   (Python's urllib) would block in `send` and never see the answer.
///
/// - **A request the HTTP parser refuses** (a header too large, a control character in a header,
///   a NUL in the path, both `Content-Length` and `Transfer-Encoding`) is answered
///   `400 bad_request` with the API's JSON error body, and the connection closed.
/// - **A request that does not keep its connection alive** (HTTP/1.0 without
///   `Connection: keep-alive`), or an answer that says `Connection: close` (a refused long
///   poll), is answered with `Connection: close`, and the connection closed
///   after the answer. An HTTP/1.0 request is answered as HTTP/1.0 (`KeepAliveTap`), so that an
///   answer of unknown length is never chunked for a client that cannot read chunks.
/// - **A path with empty segments** (`//v1/sessions/…`, `/v1//sessions/…`, what a client whose
///   base URL ends in `/` sends) or dot segments (`/./`, `/../`) is normalised before anything
///   reads it: the router, the listener's middleware and the request log all see the same path.
/// - **A client that goes away while its request waits for its answer** (it closed its side: the
///   listener allows half-closed connections, so nothing else would notice) has its connection
///   closed, which ends whatever waits on its close future (a change feed's long poll) instead
///   of holding it, and its place, to the end of its wait.
///
/// It sits after the HTTP codec; to see a request's first byte (before its head is complete) it
/// puts a small tap (`FirstByteTap`) at the front of the pipeline, and to see a request's HTTP
/// version (which the codec's `HTTPRequest` does not carry) a `KeepAliveTap` right after NIO's
/// HTTP/1 request decoder.
final class RequestGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The largest body accepted (`server.maxBodyBytes`).
    let maxBodyBytes: Int
    /// The longest a request may take to arrive, head and body.
    let requestTimeout: TimeAmount
    /// The most bytes read and dropped after an early answer.
    let drainLimit: Int
    /// The longest time spent reading them.
    let drainTimeout: TimeAmount

    /// Requests whose end has arrived, and responses written completely (HTTP/1 answers in order).
    private var requestsEnded = 0
    private var responsesEnded = 0
    /// True from a request's head until its end, when the head was passed on.
    private var headForwarded = false
    /// True once a response head was written for the request still arriving.
    private var answerStarted = false
    private var draining = false
    private var drained = 0
    /// The deadline of the request arriving now, if one is.
    private var deadline: Scheduled<Void>?
    /// Per request still to be answered, oldest first: whether its connection is to be closed
    /// after its answer (HTTP/1.0 without keep-alive, or `Connection: close`).
    private var closeAfterAnswer: [Bool] = []
    /// Set once the connection is to close after the answer being written.
    private var closing = false

    /// Header fields the guard's own answers carry besides their own (`ListenerLimits.answerHeaders`).
    let answerHeaders: HTTPFields

    init(maxBodyBytes: Int, requestTimeout: TimeAmount, drainLimit: Int = 16 << 20, drainTimeout: TimeAmount = .seconds(10), answerHeaders: HTTPFields = [:]) {
        self.answerHeaders = answerHeaders
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.drainLimit = drainLimit
        self.drainTimeout = drainTimeout
    }

    /// True while the request being answered has not been read to its end.
    private var answeringUnfinishedRequest: Bool { requestsEnded <= responsesEnded }

    func handlerAdded(context: ChannelHandlerContext) {
        // The codec turns bytes into parts only once a head is complete; the tap sees the bytes.
        let tap = FirstByteTap(onBytes: { [self] in requestBytesArrived(context) })
        try? context.pipeline.syncOperations.addHandler(tap, position: .first)
        let keepAlive = KeepAliveTap(onHead: { [self] keepAlive in closeAfterAnswer.append(!keepAlive) })
        // Right after the request decoder, which NIO puts after the response encoder: the tap
        // sees requests decoded and answers not yet encoded.
        if let decoder = try? context.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) {
            try? context.pipeline.syncOperations.addHandler(keepAlive, position: .after(decoder))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError, !draining else {
            context.fireErrorCaught(error)
            return
        }
        // Answer in the API's own words, then close: the parser cannot go on after this.
        draining = true
        deadline?.cancel()
        deadline = nil
        let promise = context.eventLoop.makePromise(of: Void.self)
        writeError(context, status: .badRequest, code: "bad_request", message: "malformed HTTP request (\(error))", promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    /// Bytes arrived: if no request is arriving, a new one starts and its clock with it.
    private func requestBytesArrived(_ context: ChannelHandlerContext) {
        guard deadline == nil, !draining else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: requestTimeout) { [self] in
            requestTimedOut(context)
        }
    }

    private func requestTimedOut(_ context: ChannelHandlerContext) {
        deadline = nil
        guard !draining else { return }
        if headForwarded && !answerStarted {
            // The route is still waiting for the body: answer for it, then close.
            draining = true
            let promise = context.eventLoop.makePromise(of: Void.self)
            writeError(context, status: .requestTimeout, code: "request_timeout",
                       message: "the request did not arrive within \(requestTimeout.nanoseconds / 1_000_000_000) seconds", promise: promise)
            promise.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        } else {
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard !draining else {
            switch part {
            case .body(let buffer):
                drained += buffer.readableBytes
                if drained > drainLimit { context.close(promise: nil) }
            case .end, .head:
                context.close(promise: nil)
            }
            return
        }
        switch part {
        case .head(var head):
            if let declared = head.headerFields[.contentLength].flatMap(Int.init), declared > maxBodyBytes {
                refuseOversizedBody(context, declared: declared)
                return
            }
            headForwarded = true
            answerStarted = false
            if let path = head.path, let normalised = Self.normalised(path) {
                head.path = normalised
                context.fireChannelRead(wrapInboundOut(.head(head)))
                return
            }
        case .end:
            requestsEnded += 1
            headForwarded = false
            deadline?.cancel()
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent, requestsEnded > responsesEnded {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Keep reading while draining: nobody downstream asks for more.
        if draining { context.read() } else { context.fireChannelReadComplete() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where !answeringUnfinishedRequest && (closeAfterAnswer.first == true || head.headerFields[.connection] == "close"):
            // The client does not keep the connection, or the answer says it is not kept (a
            // refused long poll): say so, and close after this answer.
            closing = true
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closing && !answeringUnfinishedRequest:
            responsesEnded += 1
            if !closeAfterAnswer.isEmpty { closeAfterAnswer.removeFirst() }
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(data, promise: written)
            written.futureResult.cascade(to: promise)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .head(var head) where answeringUnfinishedRequest:
            answerStarted = true
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where answeringUnfinishedRequest:
            responsesEnded += 1
            if !closeAfterAnswer.isEmpty { closeAfterAnswer.removeFirst() }
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(data, promise: written)
            written.futureResult.cascade(to: promise)
            written.futureResult.assumeIsolated().whenComplete { [self] _ in startDraining(context) }
        case .end:
            responsesEnded += 1
            if !closeAfterAnswer.isEmpty { closeAfterAnswer.removeFirst() }
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    /// `path` with each run of `/` before the query made one and its dot segments resolved
    /// (`/./` dropped, `/../` taking the segment before it, as RFC 3986 removes them), or nil
    /// when it has none: the routes, the middleware and the request log all see one spelling
    /// (`/./v1/sessions/ID` and `/v1/x/../sessions/ID` are `/v1/sessions/ID`, whose id the log
    /// never shows).
    static func normalised(_ path: String) -> String? {
        let bytes = Array(path.utf8)
        let end = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        let segments = bytes[..<end].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let dot: ArraySlice<UInt8> = [UInt8(ascii: ".")]
        let dotDot: ArraySlice<UInt8> = [UInt8(ascii: "."), UInt8(ascii: ".")]
        // Everything after the leading "" of an absolute path: an empty one is a doubled slash
        // (but for the last, a trailing slash), a dot segment is resolved.
        let inner = segments.dropFirst()
        let needsWork = inner.enumerated().contains { index, segment in
            segment == dot || segment == dotDot || (segment.isEmpty && index < inner.count - 1)
        }
        guard needsWork, bytes.first == UInt8(ascii: "/") else { return nil }
        var kept: [ArraySlice<UInt8>] = []
        for segment in inner {
            if segment.isEmpty || segment == dot { continue }
            if segment == dotDot { _ = kept.popLast(); continue }
            kept.append(segment)
        }
        var merged: [UInt8] = []
        merged.reserveCapacity(bytes.count)
        for segment in kept {
            merged.append(UInt8(ascii: "/"))
            merged.append(contentsOf: segment)
        }
        // A trailing slash (or a final dot segment) names a directory: keep it so.
        if let last = inner.last, last.isEmpty || last == dot || last == dotDot || kept.isEmpty { merged.append(UInt8(ascii: "/")) }
        merged.append(contentsOf: bytes[end...])
        return String(decoding: merged, as: UTF8.self)
    }

    /// A head that declares more body than allowed: `413` now, the head never passed on.
    private func refuseOversizedBody(_ context: ChannelHandlerContext, declared: Int) {
        deadline?.cancel()
        deadline = nil
        let promise = context.eventLoop.makePromise(of: Void.self)
        writeError(context, status: .contentTooLarge, code: "payload_too_large",
                   message: "request body is larger than \(maxBodyBytes) bytes (Content-Length: \(declared))", promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { [self] _ in startDraining(context) }
    }

    /// Writes a JSON error answer (the API's error body) with `Connection: close`.
    private func writeError(_ context: ChannelHandlerContext, status: HTTPResponse.Status, code: String, message: String, promise: EventLoopPromise<Void>) {
        let encoded: Data? = try? JSONEncoder().encode(GuardErrorBody(error: .init(code: code, message: message)))
        let body = ByteBuffer(bytes: encoded.map(Array.init) ?? Array("{}".utf8))
        var head = HTTPResponse(status: status, headerFields: answerHeaders)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
    }

    private func startDraining(_ context: ChannelHandlerContext) {
        guard !draining else { return }
        draining = true
        deadline?.cancel()
        deadline = nil
        context.eventLoop.assumeIsolated().scheduleTask(in: drainTimeout) { context.close(promise: nil) }
        context.read()
    }
}

/// Tells `RequestGuardHandler` that bytes arrived, before the HTTP codec parses them.
final class FirstByteTap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let onBytes: () -> Void

    init(onBytes: @escaping () -> Void) {
        self.onBytes = onBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        onBytes()
        context.fireChannelRead(data)
    }
}

/// Tells `RequestGuardHandler` whether each request keeps its connection alive, from the HTTP/1
/// head (its version and `Connection` header), before the codec drops the version; and answers
/// an HTTP/1.0 request as HTTP/1.0 (the codec writes every answer as 1.1, and NIO's encoder then
/// chunks a body of unknown length, which a 1.0 client cannot read). Such an answer without a
/// `Content-Length` ends when the connection does: it is marked `Connection: close` and the
/// connection closed after it.
///
/// It sits after NIO's response encoder in the pipeline, so it sees answers before they are encoded.
final class KeepAliveTap: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let onHead: (Bool) -> Void
    /// The versions of the requests still to be answered, oldest first.
    private var versions: [HTTPVersion] = []
    /// Set while an HTTP/1.0 answer of unknown length is written: close after its end.
    private var closeAfterEnd = false

    init(onHead: @escaping (Bool) -> Void) {
        self.onHead = onHead
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            versions.append(head.version)
            onHead(head.isKeepAlive)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200 && versions.first == .http1_0:
            head.version = .http1_0
            if !head.headers.contains(name: "content-length") {
                head.headers.replaceOrAdd(name: "connection", value: "close")
                head.headers.remove(name: "transfer-encoding")
                closeAfterEnd = true
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end:
            if !versions.isEmpty { versions.removeFirst() }
            guard closeAfterEnd else {
                context.write(data, promise: promise)
                return
            }
            closeAfterEnd = false
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(data, promise: written)
            written.futureResult.cascade(to: promise)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            context.write(data, promise: promise)
        }
    }
}

/// The error body the guard answers with, the API's shape: `{"error": {"code", "message"}}`.
private struct GuardErrorBody: Encodable {
    struct Detail: Encodable {
        let code: String
        let message: String
    }
    let error: Detail
}
