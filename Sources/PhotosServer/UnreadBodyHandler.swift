import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request was answered before its body was read — a `413` for a
/// body over `server.maxBodyBytes`, say — without leaving the client stuck.
///
/// Without it, the server neither reads the rest of such a body nor closes the socket: a client
/// that sends its whole body before reading the answer (Python's urllib, with
/// `Connection: close`) blocks in `send` until its own timeout and never sees the `413`. Here the
/// answer carries `Connection: close`, and once it is written the rest of the body is read and
/// thrown away — at most `drainLimit` bytes, for at most `drainTimeout` — and the connection is
/// closed, so the client finishes sending, reads the answer, and sees the end.
final class UnreadBodyHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The most bytes read and dropped after the answer.
    let drainLimit: Int
    /// The longest time spent reading them.
    let drainTimeout: TimeAmount

    /// Requests whose end has arrived, and responses written completely (HTTP/1 answers in order).
    private var requestsEnded = 0
    private var responsesEnded = 0
    private var draining = false
    private var drained = 0

    init(drainLimit: Int = 16 << 20, drainTimeout: TimeAmount = .seconds(10)) {
        self.drainLimit = drainLimit
        self.drainTimeout = drainTimeout
    }

    /// True while the request being answered has not been read to its end.
    private var answeringUnfinishedRequest: Bool { requestsEnded <= responsesEnded }

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
        if case .end = part { requestsEnded += 1 }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Keep reading while draining: nobody downstream asks for more.
        if draining { context.read() } else { context.fireChannelReadComplete() }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where answeringUnfinishedRequest:
            head.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where answeringUnfinishedRequest:
            responsesEnded += 1
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(data, promise: written)
            written.futureResult.cascade(to: promise)
            written.futureResult.assumeIsolated().whenComplete { [self] _ in startDraining(context) }
        case .end:
            responsesEnded += 1
            context.write(data, promise: promise)
        default:
            context.write(data, promise: promise)
        }
    }

    private func startDraining(_ context: ChannelHandlerContext) {
        guard !draining else { return }
        draining = true
        context.eventLoop.assumeIsolated().scheduleTask(in: drainTimeout) { context.close(promise: nil) }
        context.read()
    }
}
