import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request body does not arrive whole within `timeout` of its head
/// (issue 28). The idle timeout only bounds the gap between reads, so a client that trickles a
/// body byte every few seconds held its connection (and a descriptor) for as long as it liked.
/// Requests without a body end with their head, so streams and long polls are never cut.
final class BodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            timer?.cancel()
            let loop = context.eventLoop.assumeIsolated()
            let box = NIOLoopBound(context, eventLoop: context.eventLoop)
            timer = loop.scheduleTask(in: timeout) { box.value.close(promise: nil) }
        case .body: break
        case .end:
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }
}
