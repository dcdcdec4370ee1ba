import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The server's connections: Hummingbird's `HTTP1Channel` for every request, except a
/// connection whose first request is `GET /v1/live`, which is served by the event-driven
/// ``LiveViewerHandler`` so that an idle viewer costs no task and no async-channel wrapper.
///
/// `setup` cannot wait for the first request (NIO registers the connection only once setup
/// has returned), so it installs a ``FirstRequestSniffer`` and returns a value holding a
/// future: Hummingbird's channel when the first request is for Hummingbird, nil when the
/// connection went live, was refused or closed. `handle` awaits it — a task lives only
/// while the first request line is read — and then either returns at once or runs
/// `HTTP1Channel.handle` as usual. A keep-alive connection whose first request was not the
/// live stream stays on Hummingbird, where `GET /v1/live` is still served by the route.
struct LiveServerChannel: ServerChildChannel {
    /// One accepted connection, waiting for its first request line.
    struct Value: ServerChildChannelValue {
        /// The connection.
        let channel: any Channel
        /// Hummingbird's async channel, or nil when nothing is left for Hummingbird to do.
        let handOver: EventLoopFuture<HTTP1Channel.Value?>
    }

    /// Hummingbird's HTTP/1 channel (the router's responder).
    let http1: HTTP1Channel
    /// Opens live streams.
    let live: LiveController
    /// How long a new connection may take to send its first request line.
    let firstRequestTimeout: TimeAmount
    /// `SO_SNDBUF` for live-stream connections (nil: the kernel's).
    var sendBufferBytes: Int? = nil

    /// Installs the sniffer; the pipeline behind it is built once the first request line is in.
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let promise = channel.eventLoop.makePromise(of: HTTP1Channel.Value?.self)
        let (http1, live, timeout, sendBuffer) = (self.http1, self.live, self.firstRequestTimeout, self.sendBufferBytes)
        return channel.eventLoop.makeCompletedFuture {
            let sniffer = FirstRequestSniffer(
                timeout: timeout,
                configure: { route, channel in
                    switch route {
                    case .live:
                        if let sendBuffer {
                            try channel.syncOptions?.setOption(
                                ChannelOptions.socketOption(.so_sndbuf), value: SocketOptionValue(sendBuffer))
                        }
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.configureHTTPServerPipeline(
                            withPipeliningAssistance: false, withErrorHandling: true, withOutboundHeaderValidation: false,
                            withEncoderConfiguration: .init(), withDecoderLimitConfiguration: .init())
                        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try pipeline.addHandler(LiveViewerHandler(controller: live, logger: logger))
                        promise.succeed(nil)
                    default:
                        // HTTP1Channel's setup completes at once on the event loop, so its callback runs
                        // here: the async channel exists before the bytes are re-fired.
                        var made: Result<HTTP1Channel.Value, any Error>?
                        http1.setup(channel: channel, logger: logger).assumeIsolated().whenComplete { made = $0 }
                        guard let made else { throw ChannelError.inappropriateOperationForState }
                        promise.succeed(try made.get())
                    }
                },
                onGiveUp: { promise.succeed(nil) })
            try channel.pipeline.syncOperations.addHandler(sniffer)
            // Whatever the sniffer saw or missed, a closed connection leaves nothing for Hummingbird:
            // `handle` must never outlive it, or graceful shutdown would wait for it forever. (A
            // promise the sniffer already completed ignores this second completion.)
            channel.closeFuture.whenComplete { _ in promise.succeed(nil) }
            return Value(channel: channel, handOver: promise.futureResult)
        }
    }

    /// Waits for the first request line; hands the connection to Hummingbird when it is Hummingbird's.
    func handle(value: Value, logger: Logger) async {
        guard let channel = try? await value.handOver.get() else { return }
        await http1.handle(value: channel, logger: logger)
    }
}
