import BeekonPrimitives
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
        /// Whether the peer is still there, for the long polls and streams its requests run.
        let presence: ClientPresence
    }

    /// Hummingbird's HTTP/1 channel (the router's responder).
    let http1: HTTP1Channel
    /// Opens live streams.
    let live: LiveController
    /// How long a new connection may take to send its first request line.
    let firstRequestTimeout: TimeAmount
    /// `SO_SNDBUF` for live-stream connections (nil: the kernel's).
    var sendBufferBytes: Int? = nil
    /// The cap on open connections (nil: none).
    var limit: ConnectionLimit? = nil

    /// The receive buffers a connection's first request is read into (and a live stream's
    /// later reads): a viewer's request head fits in one or two of them.
    static let firstReads = FixedSizeRecvByteBufferAllocator(capacity: 512)

    /// Installs the sniffer; the pipeline behind it is built once the first request line is in.
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let promise = channel.eventLoop.makePromise(of: HTTP1Channel.Value?.self)
        let (http1, live, timeout, sendBuffer) = (self.http1, self.live, self.firstRequestTimeout, self.sendBufferBytes)
        let address = channel.remoteAddress?.ipAddress
        let presence = ClientPresence(address: address)
        channel.closeFuture.whenComplete { _ in presence.markGone() }
        if let limit {
            guard limit.admit(client: address) else {
                // Over the cap: a 503 and the descriptor back at once (issue 28, finding 1).
                let refusal = channel.allocator.buffer(string: ConnectionLimit.refusal)
                channel.writeAndFlush(refusal).whenComplete { _ in channel.close(promise: nil) }
                promise.succeed(nil)
                return channel.eventLoop.makeSucceededFuture(Value(channel: channel, handOver: promise.futureResult, presence: presence))
            }
            channel.closeFuture.whenComplete { _ in limit.release(client: address) }
        }
        return channel.eventLoop.makeCompletedFuture {
            // NIO keeps each connection's last receive buffer for its next read; an idle viewer
            // never reads again, so the buffer its request head was read into stays for the
            // stream's life. The head is read into small buffers; Hummingbird's connections get
            // NIO's default sizes back once routed.
            try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: Self.firstReads)
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
                        // No pipelining assistant and no header validator: once the head is out,
                        // LiveViewerHandler removes the HTTP handlers and writes chunks itself.
                        try pipeline.configureHTTPServerPipeline(
                            withPipeliningAssistance: false, withErrorHandling: true, withOutboundHeaderValidation: false,
                            withEncoderConfiguration: .init(), withDecoderLimitConfiguration: .init())
                        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try pipeline.addHandler(LiveViewerHandler(controller: live, logger: logger))
                        promise.succeed(nil)
                    default:
                        try channel.syncOptions?.setOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator())
                        // First in the pipeline once the sniffer has left: sees the peer finish sending.
                        try channel.pipeline.syncOperations.addHandler(PresenceHandler(presence: presence))
                        // HTTP1Channel's setup completes at once on the event loop, so its callback runs
                        // here: the async channel exists before the bytes are re-fired.
                        var made: Result<HTTP1Channel.Value, any Error>?
                        http1.setup(channel: channel, logger: logger).assumeIsolated().whenComplete { made = $0 }
                        guard let made else { throw ChannelError.inappropriateOperationForState }
                        let value = try made.get()
                        // Before the conversion to HTTP types, where a request's version is still known.
                        let codec = try channel.pipeline.syncOperations.handler(type: HTTP1ToHTTPServerCodec.self)
                        try channel.pipeline.syncOperations.addHandler(KeepAliveHandler(), position: .before(codec))
                        promise.succeed(value)
                    }
                },
                onGiveUp: { promise.succeed(nil) })
            try channel.pipeline.syncOperations.addHandler(sniffer)
            // Whatever the sniffer saw or missed, a closed connection leaves nothing for Hummingbird:
            // `handle` must never outlive it, or graceful shutdown would wait for it forever. (A
            // promise the sniffer already completed ignores this second completion.)
            channel.closeFuture.whenComplete { _ in promise.succeed(nil) }
            return Value(channel: channel, handOver: promise.futureResult, presence: presence)
        }
    }

    /// Waits for the first request's head; hands the connection to Hummingbird when it is Hummingbird's.
    func handle(value: Value, logger: Logger) async {
        guard let channel = try? await value.handOver.get() else { return }
        await ClientPresence.$current.withValue(value.presence) {
            await http1.handle(value: channel, logger: logger)
        }
    }
}

/// Whether the client of a connection is still there. Long polls and streams run on the
/// connection's task and stop waiting as soon as it has gone (closed, or finished sending:
/// a client that half-closes its side cannot send another request and is treated as gone),
/// instead of holding their work until their own deadline (issue 28, finding 5).
final class ClientPresence: Sendable {
    private struct State {
        var gone = false
        var next = 0
        var callbacks: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())
    /// The client's IP address (nil: unknown, e.g. a Unix socket or a test calling a handler).
    let address: String?

    /// The presence of a connection from `address`.
    init(address: String? = nil) { self.address = address }

    /// The presence of the connection the current request arrived on (nil outside a request,
    /// e.g. in tests that call a handler directly).
    @TaskLocal static var current: ClientPresence?

    /// Whether the client has gone.
    var isGone: Bool { state.withLock { $0.gone } }

    /// Records that the client has gone and runs every registered callback once.
    func markGone() {
        let callbacks = state.withLock { s -> [@Sendable () -> Void] in
            guard !s.gone else { return [] }
            s.gone = true
            defer { s.callbacks = [:] }
            return Array(s.callbacks.values)
        }
        for callback in callbacks { callback() }
    }

    /// Runs `callback` when the client goes (at once if it has); returns a key for ``forget(_:)``.
    @discardableResult
    func onGone(_ callback: @escaping @Sendable () -> Void) -> Int? {
        let key = state.withLock { s -> Int? in
            guard !s.gone else { return nil }
            s.next += 1
            s.callbacks[s.next] = callback
            return s.next
        }
        if key == nil { callback() }
        return key
    }

    /// Drops a callback (its request finished first).
    func forget(_ key: Int?) {
        guard let key else { return }
        _ = state.withLock { $0.callbacks.removeValue(forKey: key) }
    }
}

/// Marks a connection's ``ClientPresence`` gone when the peer finishes sending (end of input).
final class PresenceHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let presence: ClientPresence

    /// A handler for `presence`.
    init(presence: ClientPresence) { self.presence = presence }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let e = event as? ChannelEvent, case .inputClosed = e { presence.markGone() }
        context.fireUserInboundEventTriggered(event)
    }
}
