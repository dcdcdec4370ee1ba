import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A server the sender talks to: its address, and whether it speaks TLS.
public struct SenderTarget: Sendable {
    /// Where to connect.
    public var address: SocketAddress
    /// Whether to speak TLS (`https`).
    public var tls: Bool
    /// The host name the certificate must carry (and SNI); nil for an IP address, which the
    /// certificate is then checked against.
    public var serverName: String?

    /// A target at `address`; over TLS when `tls`, verifying `serverName` (nil: the address).
    public init(address: SocketAddress, tls: Bool = false, serverName: String? = nil) {
        self.address = address
        self.tls = tls
        self.serverName = serverName
    }
}

/// One request prepared before a run: the server it goes to (an index into the sender's
/// targets), its head and its body.
public struct PreparedRequest: Sendable {
    /// Index into ``OpenLoopSender``'s targets.
    public var target: Int
    /// The request head, `Host` and `Content-Length` included.
    public var head: HTTPRequestHead
    /// The request body (may be empty).
    public var body: ByteBuffer

    /// A request to `target` with `head` and `body`.
    public init(target: Int, head: HTTPRequestHead, body: ByteBuffer) {
        self.target = target
        self.head = head
        self.body = body
    }
}

/// How one request of a run ended.
public struct SentAnswer: Sendable {
    /// The request's index in the run.
    public let index: Int
    /// Nil when answered 200; otherwise the status (`HTTP 503`) or what went wrong with the connection.
    public let failure: String?
    /// From the moment the request was due (not sent) to its answer: open-loop latency.
    public let latency: Duration
    /// From the run's start to the answer.
    public let answeredAfter: Duration
}

/// Sends an ``OpenLoopSchedule`` of prepared HTTP/1.1 requests over keep-alive connections, all
/// on one event loop with no task per request, so the generator spends its CPU on sockets, not
/// on hand-offs between threads (issue 32: the AsyncHTTPClient-based sender used about half a
/// core at 1,000 requests/s, most of it in task switches, on the two cores it shares with the
/// server under test).
///
/// Open loop: request `i` is handed to a connection at its due time whether or not earlier ones
/// were answered. It takes an idle connection, or opens one while a server has fewer than
/// `maxConnections`, or else waits in that server's queue for the next connection to free up;
/// its latency is counted from its due time in every case, so a server that falls behind shows
/// it in the latency (no coordinated omission). A request fails when its connection cannot be
/// opened within 10 s, when the connection closes (or a write fails) before its answer, or
/// when it is not answered within `answerTimeout` of the last due time.
///
/// All state is confined to `eventLoop`; the callbacks run there too.
public final class OpenLoopSender: @unchecked Sendable {
    private let eventLoop: EventLoop
    private let targets: [SenderTarget]
    /// The client TLS context (the system's trust roots, full verification), when a target uses TLS.
    private let tls: NIOSSLContext?
    private let maxConnections: Int
    private let answerTimeout: TimeAmount

    /// One connection: its channel and the request it is waiting on (confined to the loop).
    private final class Slot: @unchecked Sendable {
        let target: Int
        var channel: Channel?
        var inFlight: Int?
        var closed = false
        init(target: Int) { self.target = target }
    }

    private struct Run {
        var requests: [PreparedRequest]
        var schedule: OpenLoopSchedule
        var start: NIODeadline
        var answered: (SentAnswer) -> Void
        var promise: EventLoopPromise<Void>
        var dispatched = 0
        var finished = 0
    }

    private var run: Run?
    /// The run's answer timeout, cancelled when the run completes (so it never acts on a later run).
    private var timeout: Scheduled<Void>?
    private var idle: [[Slot]]
    private var open: [Int]
    private var queues: [[Int]]
    private var queueHeads: [Int]
    private var live: [ObjectIdentifier: Slot] = [:]

    /// A sender to `targets` (one per server) on `eventLoop`, at most `maxConnections`
    /// connections per server, failing requests still unanswered `answerTimeout` after the last
    /// one was due.
    public init(targets: [SenderTarget], maxConnections: Int, eventLoop: EventLoop, answerTimeout: TimeAmount = .seconds(120)) throws {
        precondition(!targets.isEmpty && maxConnections > 0, "at least one target and one connection")
        self.eventLoop = eventLoop
        self.targets = targets
        tls = targets.contains(where: \.tls) ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        self.maxConnections = maxConnections
        self.answerTimeout = answerTimeout
        idle = Array(repeating: [], count: targets.count)
        open = Array(repeating: 0, count: targets.count)
        queues = Array(repeating: [], count: targets.count)
        queueHeads = Array(repeating: 0, count: targets.count)
    }

    /// Sends `requests[i]` at `schedule.offset(of: i)` after now, for every `i` of the schedule
    /// (`requests.count` must equal `schedule.count`); `answered` is called once per request on
    /// the event loop. Succeeds once every request has its answer. One run at a time.
    public func send(
        _ requests: [PreparedRequest], on schedule: OpenLoopSchedule, answered: @escaping @Sendable (SentAnswer) -> Void
    ) -> EventLoopFuture<Void> {
        precondition(requests.count == schedule.count, "one prepared request per scheduled one")
        precondition(requests.allSatisfy { targets.indices.contains($0.target) }, "every request names a known target")
        let promise = eventLoop.makePromise(of: Void.self)
        eventLoop.execute {
            precondition(self.run == nil, "one run at a time")
            self.run = Run(
                requests: requests, schedule: schedule, start: .now(), answered: answered, promise: promise)
            if requests.isEmpty { return self.complete() }
            self.tick()
        }
        return promise.futureResult
    }

    /// Closes every idle connection (after a run).
    public func close() -> EventLoopFuture<Void> {
        eventLoop.flatSubmit {
            let channels = self.idle.flatMap { $0 }.compactMap(\.channel)
            return EventLoopFuture.andAllComplete(channels.map { $0.close() }, on: self.eventLoop)
        }
    }

    // MARK: Scheduling

    private func due(_ index: Int, in run: Run) -> NIODeadline {
        run.start + TimeAmount(run.schedule.offset(of: index))
    }

    /// Dispatches every request due by now, then waits for the next one's due time.
    private func tick() {
        guard var current = run else { return }
        let now = NIODeadline.now()
        var ready: [Int] = []
        while current.dispatched < current.requests.count, due(current.dispatched, in: current) <= now {
            ready.append(current.dispatched)
            current.dispatched += 1
        }
        run = current
        for index in ready { dispatch(index) }
        guard let after = run, after.dispatched < after.requests.count else {
            if let after = run {
                let last = due(after.requests.count - 1, in: after)
                timeout = eventLoop.scheduleTask(deadline: last + answerTimeout) { self.expire() }
            }
            return
        }
        eventLoop.scheduleTask(deadline: due(after.dispatched, in: after)) { self.tick() }
    }

    private func dispatch(_ index: Int) {
        guard let target = run?.requests[index].target else { return }
        if let slot = idle[target].popLast() {
            write(index, on: slot)
        } else if open[target] < maxConnections {
            connect(target, first: index)
        } else {
            queues[target].append(index)
        }
    }

    /// The next request waiting for a connection to `target`, if any.
    private func dequeue(_ target: Int) -> Int? {
        guard queueHeads[target] < queues[target].count else { return nil }
        let index = queues[target][queueHeads[target]]
        queueHeads[target] += 1
        if queueHeads[target] == queues[target].count {
            queues[target].removeAll(keepingCapacity: true)
            queueHeads[target] = 0
        }
        return index
    }

    // MARK: Connections

    private func connect(_ target: Int, first index: Int) {
        open[target] += 1
        let slot = Slot(target: target)
        let loop = eventLoop
        let tls = targets[target].tls ? self.tls : nil
        let serverName = targets[target].serverName
        ClientBootstrap(group: eventLoop)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        AnswerHandler(
                            onAnswer: { status, keepAlive in self.answered(slot, status: status, keepAlive: keepAlive) },
                            onClose: { self.closed(slot) }))
                }
            }
            .connect(to: targets[target].address)
            .hop(to: loop)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    slot.channel = channel
                    guard !slot.closed else {
                        // Closed before the connect's future completed: `closed` left the count to us.
                        self.open[target] -= 1
                        self.finish(index, failure: "connection closed")
                        return self.serveQueue(target)
                    }
                    self.live[ObjectIdentifier(slot)] = slot
                    self.write(index, on: slot)
                case .failure(let error):
                    self.open[target] -= 1
                    self.finish(index, failure: "connect: \(type(of: error))")
                    // Not inline: a connect that fails at once would recurse through the queue.
                    loop.execute { self.serveQueue(target) }
                }
            }
    }

    private func write(_ index: Int, on slot: Slot) {
        guard let request = run?.requests[index], let channel = slot.channel else { return }
        slot.inFlight = index
        channel.write(HTTPClientRequestPart.head(request.head), promise: nil)
        if request.body.readableBytes > 0 { channel.write(HTTPClientRequestPart.body(.byteBuffer(request.body)), promise: nil) }
        // A failed write closes the connection, which fails the request (`closed`).
        channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenFailure { _ in channel.close(promise: nil) }
    }

    private func answered(_ slot: Slot, status: Int, keepAlive: Bool) {
        guard let index = slot.inFlight else { return }
        slot.inFlight = nil
        finish(index, failure: status == 200 ? nil : "HTTP \(status)")
        guard keepAlive else {
            slot.channel?.close(promise: nil)
            return
        }
        if let next = dequeue(slot.target) {
            write(next, on: slot)
        } else {
            idle[slot.target].append(slot)
        }
    }

    private func closed(_ slot: Slot) {
        guard !slot.closed else { return }
        slot.closed = true
        live[ObjectIdentifier(slot)] = nil
        idle[slot.target].removeAll { $0 === slot }
        guard slot.channel != nil else { return }  // the connect's completion finishes its request
        open[slot.target] -= 1
        if let index = slot.inFlight {
            slot.inFlight = nil
            finish(index, failure: "connection closed")
        }
        serveQueue(slot.target)
    }

    /// Opens a connection for the next waiting request of `target` while under the cap.
    private func serveQueue(_ target: Int) {
        guard open[target] < maxConnections, let next = dequeue(target) else { return }
        connect(target, first: next)
    }

    // MARK: Ending

    private func finish(_ index: Int, failure: String?) {
        guard var current = run else { return }
        let now = NIODeadline.now()
        current.finished += 1
        run = current
        func since(_ instant: NIODeadline) -> Duration {
            .nanoseconds(Int64(now.uptimeNanoseconds) - Int64(instant.uptimeNanoseconds))
        }
        current.answered(
            SentAnswer(index: index, failure: failure, latency: since(due(index, in: current)), answeredAfter: since(current.start)))
        if current.finished == current.requests.count { complete() }
    }

    /// Fails what is still unanswered `answerTimeout` after the last due time.
    private func expire() {
        guard run != nil else { return }
        for target in targets.indices {
            while let index = dequeue(target) { finish(index, failure: "timeout") }
        }
        for slot in live.values {
            guard let index = slot.inFlight else { continue }
            slot.inFlight = nil
            finish(index, failure: "timeout")
            slot.channel?.close(promise: nil)
        }
    }

    private func complete() {
        guard let current = run else { return }
        run = nil
        timeout?.cancel()
        timeout = nil
        current.promise.succeed(())
    }
}

/// Reads a connection's answers: the status of each response and whether the connection stays open.
private final class AnswerHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let onAnswer: (Int, Bool) -> Void
    private let onClose: () -> Void
    private var status = 0
    private var keepAlive = true

    init(onAnswer: @escaping (Int, Bool) -> Void, onClose: @escaping () -> Void) {
        self.onAnswer = onAnswer
        self.onClose = onClose
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            keepAlive = head.isKeepAlive
        case .body: break
        case .end: onAnswer(status, keepAlive)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        onClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
