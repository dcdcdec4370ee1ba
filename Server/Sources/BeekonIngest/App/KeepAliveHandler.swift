import NIOCore
import NIOHTTP1

/// Ends a connection with the answer to a request that does not keep it (issue 50): HTTP/1.0
/// without `Connection: keep-alive`, or `Connection: close` in any case or list (Hummingbird
/// closes only on the exact value `close`; an HTTP/1.0 connection stayed open and its next
/// request got 400). It sits between NIO's HTTP/1 codec and the conversion to HTTP types, where
/// a request's version is still known, and answers an HTTP/1.0 request as HTTP/1.0 (a body of
/// unknown length then ends with the connection instead of being chunked, which 1.0 lacks).
final class KeepAliveHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The requests whose answers are not complete yet, in order (requests may be pipelined).
    private var requests = CircularBuffer<(version: HTTPVersion, keepAlive: Bool)>()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) { requests.append((head.version, head.isKeepAlive)) }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let request = requests.first else { return context.write(data, promise: promise) }
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200:
            if request.version == .http1_0 { head.version = .http1_0 }
            if !request.keepAlive { head.headers.replaceOrAdd(name: "connection", value: "close") }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .head, .body:
            context.write(data, promise: promise)
        case .end:
            requests.removeFirst()
            guard !request.keepAlive else { return context.write(data, promise: promise) }
            let written = context.eventLoop.makePromise(of: Void.self)
            if let promise { written.futureResult.cascade(to: promise) }
            context.writeAndFlush(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }
}
