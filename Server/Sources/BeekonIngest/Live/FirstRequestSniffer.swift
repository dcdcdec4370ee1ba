import NIOCore

/// The first handler of every accepted connection: buffers bytes until the head of the
/// first request is complete, asks ``FirstRequestRoute`` where it goes (from its request
/// line), lets `configure` build that pipeline behind it, re-fires every buffered byte into
/// it (pipelined requests included, untouched) and removes itself.
///
/// A request line longer than ``FirstRequestRoute/maxLineBytes`` gets `400` and the
/// connection is closed; so is a connection that sends no complete head within `timeout`
/// (a silent or header-trickling connection cannot hold a slot, issue 28), or that ends or
/// fails first. `onGiveUp` is
/// called in each of those cases, `configure` once otherwise.
final class FirstRequestSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Builds the pipeline for a route (called on the event loop, before the bytes are re-fired).
    typealias Configure = (FirstRequestRoute, any Channel) throws -> Void

    private let timeout: TimeAmount
    private let configure: Configure
    private let onGiveUp: () -> Void
    private var buffered = ByteBuffer()
    private var timer: Scheduled<Void>?
    private var done = false

    /// - Parameters:
    ///   - timeout: How long a connection may take to send the whole head of its first request.
    ///   - configure: Builds the pipeline for `.live` or `.hummingbird`.
    ///   - onGiveUp: Called when the connection is closed before a route was chosen.
    init(timeout: TimeAmount, configure: @escaping Configure, onGiveUp: @escaping () -> Void) {
        self.timeout = timeout
        self.configure = configure
        self.onGiveUp = onGiveUp
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { startTimer(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        startTimer(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        buffered.writeBuffer(&bytes)
        let route = buffered.withUnsafeReadableBytes { FirstRequestRoute.classify($0) }
        // The route is known from the request line; the deadline runs until the whole head is in.
        if route == .live || route == .hummingbird, !buffered.withUnsafeReadableBytes({ FirstRequestRoute.headIsComplete($0) }) {
            return
        }
        switch route {
        case .needMore: return
        case .tooLong:
            var answer = context.channel.allocator.buffer(capacity: 96)
            answer.writeString("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            giveUp(context: context, answer: answer)
        case .live, .hummingbird:
            finish()
            do {
                try configure(route, context.channel)
            } catch {
                onGiveUp()
                context.close(promise: nil)
                return
            }
            let bytes = buffered
            buffered = ByteBuffer()
            context.fireChannelRead(wrapInboundOut(bytes))
            context.fireChannelReadComplete()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done { giveUp(context: context, answer: nil) }
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !done else { return context.fireUserInboundEventTriggered(event) }
        // The peer finished sending (half-close) before a whole head, or the server is quiescing.
        if let e = event as? ChannelEvent, case .inputClosed = e { return giveUp(context: context, answer: nil) }
        if event is ChannelShouldQuiesceEvent { return giveUp(context: context, answer: nil) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !done else { return context.fireErrorCaught(error) }
        giveUp(context: context, answer: nil)
    }

    private func startTimer(context: ChannelHandlerContext) {
        guard timer == nil, !done else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (sniffer, context) = bound.value
            sniffer.giveUp(context: context, answer: nil)
        }
    }

    private func finish() {
        done = true
        timer?.cancel()
        timer = nil
    }

    private func giveUp(context: ChannelHandlerContext, answer: ByteBuffer?) {
        guard !done else { return }
        finish()
        onGiveUp()
        if let answer {
            context.writeAndFlush(NIOAny(answer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        } else {
            context.close(promise: nil)
        }
    }
}
