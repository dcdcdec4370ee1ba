import Beekon
import BeekonPrimitives
import BeekonWire
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a `LiveViewer` reports.
public enum LiveViewerEvent: Sendable, Equatable {
    /// A stream was opened (HTTP 200).
    case connected
    /// A message from the server (`fix`, `geofence_event`, `device`, `locate`, `reset`, …);
    /// ``liveEvent`` reads its data as a typed ``WireLiveEvent``.
    case message(SSEMessage)
    /// A comment line arrived (the server's heartbeat).
    case heartbeat
    /// The stream ended or failed; the viewer reconnects after `retryIn`.
    case disconnected(reason: String, retryIn: Duration)
    /// The server refused the credential (401/403): the viewer stops.
    case refused(status: Int)
}

extension SSEMessage {
    /// The message as a typed live event (issue 31): its `data` read by BeekonWire, the same
    /// module the server writes it with. Nil for an event name this version does not know (a
    /// newer server may add kinds).
    /// - Throws: `WireDecodingError` when the data does not fit its event's type.
    public func liveEvent() throws(WireDecodingError) -> WireLiveEvent? {
        try WireLiveEvent.decode(event: event, data: Data(data.utf8))
    }
}

extension LiveViewerEvent {
    /// The typed event of a ``message(_:)`` (``SSEMessage/liveEvent()``); nil for the other
    /// cases, for an event name this version does not know, and for data that does not fit its type.
    public var liveEvent: WireLiveEvent? {
        guard case .message(let m) = self else { return nil }
        return try? m.liveEvent()
    }
}

/// A viewer of `beekon-ingest`'s `GET /v1/live` stream: it resumes with `Last-Event-ID`
/// after every drop (so no event from the gap is lost and none is repeated) and
/// reconnects with capped, jittered exponential backoff (`LiveBackoff`: 1 s doubling to
/// 30 s). Waits run on the injected clock; the jitter source is injected too.
public final class LiveViewer: Sendable {
    /// The stream URL, e.g. `https://track.example.com/v1/live?devices=…`.
    public let url: URL
    /// Extra request headers, e.g. `Authorization: Bearer <share token>`.
    public let headers: [String: String]
    let clock: any BeekonClock
    let random: @Sendable () -> Double
    let idleTimeout: TimeInterval
    private let state: Locked<(lastEventID: String?, backoff: LiveBackoff, retryMillis: Int?)>

    /// Creates a viewer. `lastEventID` resumes an earlier session; `idleTimeout` (default
    /// 45 s) ends a connection on which nothing arrives. The server writes to a stream at least
    /// every two heartbeat ticks (an event, or a comment when there was none since the last
    /// tick): 30 s at its default `--live-heartbeat` of 15 s, so keep this above twice the
    /// server's heartbeat.
    public init(
        url: URL, headers: [String: String] = [:], lastEventID: String? = nil, backoff: LiveBackoff = LiveBackoff(),
        clock: any BeekonClock = SystemClock(), idleTimeout: TimeInterval = 45,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.url = url
        self.headers = headers
        self.clock = clock
        self.random = random
        self.idleTimeout = idleTimeout
        state = Locked((lastEventID, backoff, nil))
    }

    /// The id of the last message received (what the next connection resumes after).
    public var lastEventID: String? { state.withLock { $0.lastEventID } }

    /// The server's `retry:` hint in milliseconds, once one arrived (advice for browsers'
    /// `EventSource`; this viewer keeps its own backoff, which starts at 1 s).
    public var serverRetryMillis: Int? { state.withLock { $0.retryMillis } }

    /// Connects, and reconnects until the task is cancelled or the server refuses the credential.
    public func events() -> AsyncStream<LiveViewerEvent> {
        AsyncStream { continuation in
            let task = Task {
                while !Task.isCancelled {
                    let outcome = await self.connectOnce(continuation)
                    if case .refused(let status) = outcome {
                        continuation.yield(.refused(status: status))
                        break
                    }
                    guard !Task.isCancelled else { break }
                    let delay = self.state.withLock { $0.backoff.nextDelay(unit: self.random()) }
                    continuation.yield(.disconnected(reason: outcome.reason, retryIn: delay))
                    do { try await self.clock.sleep(for: delay) } catch { break }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    enum Outcome: Sendable {
        case ended(String)
        case refused(Int)
        var reason: String {
            switch self {
            case .ended(let r): return r
            case .refused(let s): return "HTTP \(s)"
            }
        }
    }

    private func connectOnce(_ continuation: AsyncStream<LiveViewerEvent>.Continuation) async -> Outcome {
        var request = URLRequest(url: url)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        if let id = lastEventID { request.setValue(id, forHTTPHeaderField: "Last-Event-ID") }
        let connection = SSEConnection { [self] message in
            if let id = message.id { state.withLock { $0.lastEventID = id } }
            continuation.yield(.message(message))
        } onComment: { [self] retry in
            if let retry { state.withLock { $0.retryMillis = retry } }
            continuation.yield(.heartbeat)
        } onOpen: { [self] status in
            guard status == 200 else { return }
            state.withLock { $0.backoff.reset() }
            continuation.yield(.connected)
        }
        return await connection.run(request, idleTimeout: idleTimeout)
    }
}

/// One HTTP connection's worth of streaming, through a `URLSessionDataDelegate`
/// (available on Linux's FoundationNetworking too).
final class SSEConnection: NSObject, URLSessionDataDelegate, Sendable {
    private let onMessage: @Sendable (SSEMessage) -> Void
    private let onOpen: @Sendable (Int) -> Void
    private let onComment: @Sendable (Int?) -> Void
    private struct Exchange {
        var parser = SSEParser()
        var status = 0
        var done: CheckedContinuation<LiveViewer.Outcome, Never>?
        var finished = false
    }

    private let stream = Locked(Exchange())

    init(
        onMessage: @escaping @Sendable (SSEMessage) -> Void, onComment: @escaping @Sendable (Int?) -> Void,
        onOpen: @escaping @Sendable (Int) -> Void
    ) {
        self.onMessage = onMessage
        self.onComment = onComment
        self.onOpen = onOpen
    }

    func run(_ request: URLRequest, idleTimeout: TimeInterval) async -> LiveViewer.Outcome {
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = idleTimeout
        config.timeoutIntervalForResource = 365 * 86_400
        let session = URLSession(configuration: config, delegate: self, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: request)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { c in
                stream.withLock { $0.done = c }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
    }

    private func finish(_ outcome: LiveViewer.Outcome) {
        let c: CheckedContinuation<LiveViewer.Outcome, Never>? = stream.withLock { stream in
            guard !stream.finished else { return nil }
            stream.finished = true
            return stream.done
        }
        c?.resume(returning: outcome)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        stream.withLock { $0.status = code }
        if code == 200 {
            onOpen(code)
            completionHandler(.allow)
        } else {
            completionHandler(.cancel)
            finish(code == 401 || code == 403 ? .refused(code) : .ended("HTTP \(code)"))
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (messages, newComments, retry) = stream.withLock { stream -> ([SSEMessage], Int, Int?) in
            let before = stream.parser.comments
            let messages = stream.parser.feed(data)
            return (messages, stream.parser.comments - before, stream.parser.retryMillis)
        }
        for _ in 0..<newComments { onComment(retry) }
        for m in messages { onMessage(m) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(.ended(error.map { "\($0.localizedDescription)" } ?? "the server closed the stream"))
    }
}
