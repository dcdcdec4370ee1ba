import BeekonWire
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// The event-driven live stream: serves `GET /v1/live` on a connection whose first request
/// it is (``LiveServerChannel`` routes it here), with no task of its own while idle.
///
/// Opening (the credential, the cursor, the log's marks) runs in one short task through
/// ``LiveController/prepare(_:)``, exactly as on the Hummingbird route. Once the viewer is
/// subscribed to the ``LiveHub``, every hub signal hops to this channel's event loop and
/// copies events from the ring into the socket. Only a read from the store (a viewer behind
/// the ring) or a share re-check (revocation, expiry) runs a short task, one at a time.
///
/// Back-pressure: events are taken from the hub only while the channel is writable, so the
/// server buffers at most one page past the channel's high-water mark per viewer. A paused
/// viewer keeps its cursor; when its socket drains it resumes from the cursor — from the
/// ring, or from the store if the ring moved past it — so nothing is skipped or repeated.
/// A viewer still not writable at two consecutive heartbeat ticks is closed (``ViewerStallRule``,
/// logged as "stopped reading"); its client resumes with `Last-Event-ID`.
final class LiveViewerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private enum Phase { case awaitingRequest, opening, streaming, closed }

    private let controller: LiveController
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var phase = Phase.awaitingRequest
    private var head: HTTPRequest?
    private var start: LiveStart?
    private var cursor: Int64 = 0
    private var stall = ViewerStallRule(beats: 0)
    /// A store read or share re-check is in flight; `again` records a wake-up meanwhile.
    private var busy = false
    private var again = false
    private var subscription: Int?

    init(controller: LiveController, logger: Logger) {
        self.controller = controller
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        phase = .closed
        unsubscribe()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h) where phase == .awaitingRequest: head = h
        case .end where phase == .awaitingRequest:
            // The head is not kept: an open stream holds only what ``LiveStart`` needs.
            if let head {
                self.head = nil
                open(head, context: context)
            }
        default: break  // a body, or anything pipelined after the stream's request: ignored
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        phase = .closed
        unsubscribe()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump() }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            close(reason: "the server is shutting down")
        } else if let e = event as? ChannelEvent, case .inputClosed = e {
            // The viewer hung up: close now rather than at the next heartbeat (issue 28, finding 5).
            close(reason: "the viewer went away")
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("live viewer: channel error", metadata: ["error": "\(error)"])
        phase = .closed
        unsubscribe()
        context.close(promise: nil)
    }

    // MARK: Opening

    private func open(_ head: HTTPRequest, context: ChannelHandlerContext) {
        phase = .opening
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
        let address = context.channel.remoteAddress?.ipAddress
        Task { [controller] in
            switch await controller.prepareCounted(request, address: address) {
            case .stream(let start):
                loop.execute { bound.value.begin(start) }
            case .refused(let response):
                let collector = LiveBodyCollector()
                try? await response.body.write(collector)
                let body = collector.bytes
                loop.execute { bound.value.refuse(response, body: body) }
            }
        }
    }

    private func refuse(_ response: Response, body: ByteBuffer) {
        guard phase == .opening, let context else { return }
        phase = .closed
        var head = response.head
        head.headerFields[.contentLength] = "\(body.readableBytes)"
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }

    private func begin(_ start: LiveStart) {
        guard phase == .opening, let context else { return }
        phase = .streaming
        self.start = start
        cursor = start.cursor
        context.write(wrapOutboundOut(.head(HTTPResponse(status: .ok, headerFields: LiveStart.headers))), promise: nil)
        guard Self.dropHTTPCodecs(context: context) else {
            logger.error("live viewer: the connection's pipeline is not the one the stream was set up with")
            phase = .closed
            context.close(promise: nil)
            return
        }
        writeChunk(start.preamble, context: context)
        context.flush()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let hub = controller.hub
        stall = ViewerStallRule(beats: hub.beats)
        // The hub runs the wake-ups of all this loop's viewers in one task on the loop.
        subscription = hub.subscribe(
            share: start.grant.shareId, loop: loop,
            wake: { bound.value.pump() },
            finish: { loop.execute { bound.value.close(reason: "the live hub stopped") } })
        pump()
    }

    /// Once the stream's head is written, the HTTP handlers leave the pipeline; whether they did.
    ///
    /// - The connection's input is never read again (anything sent after the stream's request
    ///   is ignored), so the request decoder — the HTTP parser and the buffers it keeps — and
    ///   its error handler leave, and a ``LiveInputDiscarder`` takes their place. End of input
    ///   and errors still reach this handler.
    /// - The body is chunked, and this handler frames each chunk itself (``writeChunk(_:context:)``),
    ///   so the response codecs leave too: every write goes straight to the socket. Issue 32: an
    ///   event is written to every viewer of an instance, and at 10,000 viewers the walk through
    ///   three outbound handlers per write (each boxing and retaining the part, the encoder
    ///   making three writes of it) was about a sixth of the servers' CPU (0.82–0.87× without it).
    private static func dropHTTPCodecs(context: ChannelHandlerContext) -> Bool {
        let pipeline = context.pipeline.syncOperations
        // Any other HTTP handler (a pipelining assistant, a header validator) would take the raw
        // chunks for a typed part and fail: ``LiveServerChannel`` configures neither.
        guard (try? pipeline.context(handlerType: HTTPServerPipelineHandler.self)) == nil,
            (try? pipeline.context(handlerType: NIOHTTPResponseHeadersValidator.self)) == nil,
            let decoder = try? pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self),
            let errors = try? pipeline.context(handlerType: HTTPServerProtocolErrorHandler.self),
            let codec = try? pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self),
            let encoder = try? pipeline.context(handlerType: HTTPResponseEncoder.self),
            (try? pipeline.addHandler(LiveInputDiscarder(), position: .before(decoder.handler))) != nil
        else { return false }
        for handler in [decoder, errors, codec, encoder] { pipeline.removeHandler(context: handler, promise: nil) }
        return true
    }

    /// Writes (without flushing) `payload` as one chunk of the chunked body.
    private func writeChunk(_ payload: ByteBuffer, context: ChannelHandlerContext) {
        guard let chunk = Self.chunk(payload, allocator: context.channel.allocator) else { return }
        context.write(NIOAny(chunk), promise: nil)
    }

    /// `payload` framed as one chunk of a chunked body (RFC 9112 §7.1): its size in hex, CRLF,
    /// the bytes, CRLF, in one buffer (one `writev` element; a frame is a few hundred bytes).
    /// Nil for an empty payload, whose chunk would end the body.
    static func chunk(_ payload: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer? {
        let size = payload.readableBytes
        guard size > 0 else { return nil }
        var chunk = allocator.buffer(capacity: size + 20)
        chunk.writeString(String(size, radix: 16))  // a small string: stored inline, no allocation
        chunk.writeStaticString("\r\n")
        chunk.writeImmutableBuffer(payload)
        chunk.writeStaticString("\r\n")
        return chunk
    }

    /// The last chunk of a chunked body (no trailers).
    private static let lastChunk = ByteBuffer(string: "0\r\n\r\n")
    /// The keep-alive comment, framed once.
    private static let keepAliveChunk = chunk(ByteBuffer(string: LiveStart.keepAlive), allocator: ByteBufferAllocator())!

    // MARK: Delivering

    /// Looks for work: re-checks a share first (a short task), then delivers.
    private func pump() {
        guard phase == .streaming, let context, let start else { return }
        if busy {
            again = true
            return
        }
        guard start.grant.shareId != nil else { return deliver() }
        busy = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        Task {
            let valid = await start.grant.stillValid()
            loop.execute { bound.value.rechecked(valid) }
        }
    }

    private func rechecked(_ valid: Bool) {
        busy = false
        guard valid else { return close(reason: "the share was revoked or expired", finish: true) }
        deliver()
        resumeIfWoken()
    }

    /// Copies events after the cursor into the socket while it is writable.
    private func deliver() {
        guard phase == .streaming, let context, let start else { return }
        let hub = controller.hub
        // Every page pending goes out with one flush (one write to the socket) at the end.
        var wrote = false
        delivering: while context.channel.isWritable {
            switch hub.fetch(after: cursor, limit: LiveController.page) {
            case .notReady: break delivering
            case .events(let events):
                guard !events.isEmpty else { break delivering }
                wrote = write(events, start: start, shared: hub.frames, context: context) || wrote
            case .backfill:
                if wrote { context.flush() }
                return readStore(context: context)
            }
        }
        if wrote { context.flush() }
        heartbeat(context: context)
    }

    /// A viewer behind the ring: one page from the store, in a short task.
    private func readStore(context: ChannelHandlerContext) {
        busy = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let (store, cursor) = (controller.store, self.cursor)
        Task {
            do {
                let events = try await store.events(after: cursor, limit: LiveController.page)
                loop.execute { bound.value.readFromStore(events) }
            } catch {
                loop.execute { bound.value.close(reason: "the event log could not be read", finish: true) }
            }
        }
    }

    private func readFromStore(_ events: [LiveEvent]) {
        busy = false
        guard phase == .streaming, let context, let start else { return }
        if events.isEmpty {
            heartbeat(context: context)
            return resumeIfWoken()
        }
        if write(events, start: start, shared: nil, context: context) { context.flush() }
        pump()
    }

    /// Writes (without flushing) the frames of `events` this viewer may see and moves the
    /// cursor past them; whether anything was written.
    private func write(_ events: [LiveEvent], start: LiveStart, shared: LiveFrameCache?, context: ChannelHandlerContext) -> Bool {
        guard let last = events.last else { return false }
        cursor = last.seq
        let out = start.frames(events, nowMillis: WireTimestamp(controller.now()).millis, shared: shared)
        guard out.readableBytes > 0 else { return false }
        writeChunk(out, context: context)
        stall.noteSent()
        return true
    }

    /// Runs the slow-viewer rule at each check: a keep-alive comment at a new heartbeat tick
    /// (unless events went out since the last one), or the close of a viewer that stayed unwritable.
    private func heartbeat(context: ChannelHandlerContext) {
        switch stall.check(beats: controller.hub.beats, writable: context.channel.isWritable) {
        case .none, .wait: break
        case .keepAlive:
            context.writeAndFlush(NIOAny(Self.keepAliveChunk), promise: nil)
        case .close(let beats):
            controller.hub.noteStalled()
            close(reason: "the viewer stopped reading (not writable for \(beats) heartbeats)")
        }
    }

    private func resumeIfWoken() {
        guard again else { return }
        again = false
        pump()
    }

    // MARK: Closing

    /// Ends the stream; with `finish`, ends the chunked body first (as the Hummingbird route does).
    private func close(reason: String, finish: Bool = false) {
        guard phase != .closed, let context else { return }
        let streaming = phase == .streaming
        phase = .closed
        unsubscribe()
        logger.info("live viewer closed", metadata: ["reason": "\(reason)"])
        if finish, streaming, context.channel.isWritable {
            context.writeAndFlush(NIOAny(Self.lastChunk)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        } else {
            context.close(promise: nil)
        }
    }

    private func unsubscribe() {
        if let id = subscription {
            subscription = nil
            controller.hub.unsubscribe(id)
        }
        start?.hold?.release()
    }
}

/// Stands in for the request decoder of an open live stream: drops the bytes a viewer sends
/// after its request (they were ignored before, parsed) and passes every event on.
final class LiveInputDiscarder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
