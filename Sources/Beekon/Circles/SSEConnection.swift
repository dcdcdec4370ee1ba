import BeekonPrimitives
import BeekonWire
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP connection's worth of a `text/event-stream` (Server-Sent Events), through a
/// `URLSessionDataDelegate` (available on Linux's FoundationNetworking too): the messages are cut
/// by BeekonWire's ``SSEParser`` as the bytes arrive. The SDK's circle stream and the
/// `LiveViewer` of BeekonSources both read their streams through it.
package final class SSEConnection: NSObject, URLSessionDataDelegate, Sendable {
    /// How a connection ended.
    package enum Outcome: Sendable, Equatable {
        /// The stream ended or failed after (or without) opening; the reason in words.
        case ended(String)
        /// The server answered `status` (not 200) with `body`.
        case refused(status: Int, body: Data)

        /// The outcome in words.
        package var reason: String {
            switch self {
            case .ended(let r): return r
            case .refused(let s, _): return "HTTP \(s)"
            }
        }
    }

    private let onMessage: @Sendable (SSEMessage) -> Void
    private let onOpen: @Sendable (Int) -> Void
    private let onComment: @Sendable (Int?) -> Void
    private struct Exchange {
        var parser = SSEParser()
        var status = 0
        var body = Data()
        var done: CheckedContinuation<Outcome, Never>?
        var finished = false
    }

    private let stream = Locked(Exchange())

    /// Creates a connection: `onOpen` gets the 200, `onMessage` each message, `onComment` each
    /// comment line (a heartbeat) with the server's latest `retry:` hint.
    package init(
        onMessage: @escaping @Sendable (SSEMessage) -> Void, onComment: @escaping @Sendable (Int?) -> Void = { _ in },
        onOpen: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.onMessage = onMessage
        self.onComment = onComment
        self.onOpen = onOpen
    }

    /// Runs `request` until the stream ends, fails, is refused, or the calling task is cancelled;
    /// `idleTimeout` ends a connection on which nothing arrives.
    package func run(_ request: URLRequest, idleTimeout: TimeInterval) async -> Outcome {
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

    private func finish(_ outcome: Outcome) {
        let c: CheckedContinuation<Outcome, Never>? = stream.withLock { stream in
            guard !stream.finished else { return nil }
            stream.finished = true
            return stream.done
        }
        c?.resume(returning: outcome)
    }

    package func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        stream.withLock { $0.status = code }
        if code == 200 { onOpen(code) }
        // A refusal's body (the error JSON) is read to its end, then reported.
        completionHandler(.allow)
    }

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (status, messages, newComments, retry) = stream.withLock { stream -> (Int, [SSEMessage], Int, Int?) in
            guard stream.status == 200 else {
                if stream.body.count < 16_384 { stream.body.append(data.prefix(16_384 - stream.body.count)) }
                return (stream.status, [], 0, nil)
            }
            let before = stream.parser.comments
            let messages = stream.parser.feed(data)
            return (stream.status, messages, stream.parser.comments - before, stream.parser.retryMillis)
        }
        guard status == 200 else { return }
        for _ in 0..<newComments { onComment(retry) }
        for m in messages { onMessage(m) }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let (status, body) = stream.withLock { ($0.status, $0.body) }
        if status != 0, status != 200 {
            finish(.refused(status: status, body: body))
        } else {
            finish(.ended(error.map { "\($0.localizedDescription)" } ?? "the server closed the stream"))
        }
    }
}
