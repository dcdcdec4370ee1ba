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
        switch await connection.run(request, idleTimeout: idleTimeout) {
        case .ended(let why): return .ended(why)
        case .refused(let status, _) where status == 401 || status == 403: return .refused(status)
        case .refused(let status, _): return .ended("HTTP \(status)")
        }
    }
}
