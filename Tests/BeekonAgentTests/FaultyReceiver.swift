import BeekonGzip
import BeekonLoopback
@testable import Beekon
import BeekonTesting
import BeekonWire
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 upload receiver on 127.0.0.1:<free port>, written with POSIX
/// sockets (one thread per connection, keep-alive). It gunzips and decodes every
/// request body, records it, and answers as scripted per request — so the agent's
/// real URLSession transport meets 5xx, `Retry-After`, lost answers, stuck servers.
///
/// Tests wait on its events (`waitFor`) with bounded timeouts, never on sleeps.
final class FaultyReceiver: @unchecked Sendable {
    /// What the receiver does with one request, after reading and recording its body.
    enum Action: Sendable, Hashable, CustomStringConvertible {
        /// Answer with this status (and headers); 2xx means the batch is stored.
        case status(Int, headers: [String: String] = [:])
        /// Store the batch, then close the connection without answering (the 2xx is lost).
        case storeThenDrop
        /// Store the batch and keep the connection open, unanswered, until `releaseHeld()`
        /// (or `stop()`), then close it without answering.
        case hold
        /// Store the batch, wait this long (past the client's deadline), then answer 200.
        case answerLate(seconds: Double)

        static let ok = Action.status(200)

        /// Whether a server acting like this has durably stored the batch.
        var stores: Bool {
            switch self {
            case .status(let s, _): return (200..<300).contains(s)
            case .storeThenDrop, .hold, .answerLate: return true
            }
        }

        var description: String {
            switch self {
            case .status(let s, let h): return h.isEmpty ? "\(s)" : "\(s) \(h)"
            case .storeThenDrop: return "store+drop"
            case .hold: return "hold"
            case .answerLate(let s): return "answer 200 after \(s) s"
            }
        }
    }

    /// One request as received.
    struct Request: Sendable {
        var index: Int
        var action: Action
        var method: String
        var path: String
        /// Header names lowercased.
        var headers: [String: String]
        /// The body as sent (gzipped when `content-encoding: gzip`).
        var rawBody: Data
        /// The decoded envelope, or why it could not be decoded.
        var envelope: Result<WireEnvelope, Failure>
        /// Seconds since the receiver started when the whole request had arrived.
        var elapsed: Double

        /// One line for failure messages: index, time, batch, size, answer.
        var summary: String {
            "#\(index) +\(String(format: "%.2f", elapsed))s \(batchID?.wireString ?? "?") ×\(locationIDs.count) → \(action)"
        }

        var batchID: UUID? { try? envelope.get().batchId }
        var locationIDs: [UUID] { (try? envelope.get().locations.map(\.id)) ?? [] }
    }

    struct Failure: Error, Sendable, CustomStringConvertible {
        var description: String
    }

    let port: Int
    var url: String { "http://127.0.0.1:\(port)/v1/locations" }

    private let listener: LoopbackListener
    private let started = Date()
    private let lock = NSLock()
    private let script: [Action]
    private let defaultAction: Action
    private var requests: [Request] = []
    private var commandPolls = 0
    private var heldFDs: Set<Int32> = []
    private var acceptedConnections = 0
    private var released = false
    private var stopped = false
    private let changes = ChangeSignal()
    private let releaseCondition = NSCondition()

    /// Whether the answer before a `.storeThenDrop` closes its connection (see `serve`).
    private let freshConnectionBeforeDrop: Bool

    /// Starts listening; request `i` (0-based) gets `script[i]`, later ones `then`.
    init(script: [Action] = [], then defaultAction: Action = .ok, freshConnectionBeforeDrop: Bool = true) throws {
        self.script = script
        self.defaultAction = defaultAction
        self.freshConnectionBeforeDrop = freshConnectionBeforeDrop
        do { listener = try LoopbackListener() } catch { throw Failure(description: error.description) }
        port = listener.port
        listener.start { [self] fd in
            lock.withLock { acceptedConnections += 1 }
            serve(fd)
        }
    }

    deinit { stop() }

    // MARK: - What the tests see

    /// Every request so far, in arrival order.
    var received: [Request] { lock.withLock { requests } }

    /// Polls of the locate command channel answered 404 (not counted as requests).
    var locateCommandPolls: Int { lock.withLock { commandPolls } }

    /// Every request as one line each, for failure messages.
    var log: String { received.map(\.summary).joined(separator: "\n") }

    /// Connections accepted so far (1 for any number of requests on one kept-alive connection).
    var connections: Int { lock.withLock { acceptedConnections } }

    /// Requests whose batch a real server would have stored (2xx, lost 2xx, held).
    var stored: [Request] { received.filter { $0.action.stores } }

    /// Waits until `predicate` holds for the requests received so far; throws after `timeout`.
    @discardableResult
    func waitFor(
        _ what: String, timeout: Duration = .seconds(30),
        _ predicate: @escaping @Sendable ([Request]) -> Bool
    ) async throws -> [Request] {
        let found = try await changes.wait(timeout: timeout) { [self] () -> [Request]? in
            let snapshot = lock.withLock { requests }
            return predicate(snapshot) ? snapshot : nil
        }
        guard let found else {
            throw Failure(description: "timed out after \(timeout) waiting for \(what); received:\n\(log)")
        }
        return found
    }

    /// Closes the held connections without an answer; later `.hold` requests are closed at once.
    func releaseHeld() {
        lock.withLock {
            released = true
            for fd in heldFDs { shutdown(fd, Int32(SHUT_RDWR)) }  // still open: closed under this lock
            heldFDs = []
        }
        releaseCondition.lock()
        releaseCondition.broadcast()
        releaseCondition.unlock()
    }

    /// Stops listening and closes every connection.
    func stop() {
        let first: Bool = lock.withLock {
            guard !stopped else { return false }
            stopped = true
            released = true
            return true
        }
        guard first else { return }
        listener.stop()
        releaseCondition.lock()
        releaseCondition.broadcast()
        releaseCondition.unlock()
    }

    // MARK: - Server

    /// Serves requests on one connection until it closes or an action ends it.
    private func serve(_ fd: Int32) {
        var reader = HTTPMessageReader(fd: fd)
        while let head = reader.readHead() {
            guard let (method, path, headers) = Self.parseHead(head) else { return }
            if headers["expect"]?.lowercased() == "100-continue" {
                guard LoopbackSocket.sendAll(fd, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
            }
            guard let bytes = reader.readBody(headers: headers) else { return }
            let body = Data(bytes)
            // An upload-only backend: the locate command channel (BY-2) does not exist here,
            // and such a poll is neither an upload nor scripted.
            if method == "GET", path.contains("/commands") {
                lock.withLock { commandPolls += 1 }
                guard LoopbackSocket.sendAll(fd, Data("HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}".utf8)) else { return }
                continue
            }
            let (action, nextDrops) = record(method: method, path: path, headers: headers, body: body)
            switch action {
            case .status(let code, let extra):
                var response = "HTTP/1.1 \(code) \(Self.reason(code))\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                for (k, v) in extra { response += "\(k): \(v)\r\n" }
                // The next request's connection is dropped: make it a fresh one, so the drop
                // is seen whatever the client's connection reuse (see
                // `lostAnswerAfterAKeepAliveExchange` in AgentSyncTests for the reuse case).
                if nextDrops && freshConnectionBeforeDrop { response += "Connection: close\r\n" }
                response += "\r\n{}"
                guard LoopbackSocket.sendAll(fd, Data(response.utf8)) else { return }
                if nextDrops && freshConnectionBeforeDrop { return }
            case .storeThenDrop:
                shutdown(fd, Int32(SHUT_RDWR))
                return
            case .hold:
                let alreadyReleased: Bool = lock.withLock {
                    if !released { heldFDs.insert(fd) }
                    return released
                }
                if !alreadyReleased {
                    releaseCondition.lock()
                    while !(lock.withLock { released }) { releaseCondition.wait() }
                    releaseCondition.unlock()
                }
                shutdown(fd, Int32(SHUT_RDWR))
                return
            case .answerLate(let seconds):
                // Simulates a server that is slower than the client's deadline.
                let deadline = Date().addingTimeInterval(seconds)
                releaseCondition.lock()
                while Date() < deadline, !(lock.withLock { stopped }) {
                    _ = releaseCondition.wait(until: deadline)
                }
                releaseCondition.unlock()
                _ = LoopbackSocket.sendAll(fd, Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".utf8))
                return
            }
        }
    }

    /// Records a request; returns its action and whether the next request is scripted to be dropped.
    private func record(method: String, path: String, headers: [String: String], body: Data) -> (Action, Bool) {
        let envelope: Result<WireEnvelope, Failure>
        do {
            let json = headers["content-encoding"]?.lowercased() == "gzip" ? try Gzip.decompress(body) : body
            envelope = .success(try WireEnvelope.decode(json))
        } catch {
            envelope = .failure(Failure(description: "\(error)"))
        }
        let (action, nextDrops): (Action, Bool) = lock.withLock {
            let index = requests.count
            let action = index < script.count ? script[index] : defaultAction
            let next = index + 1 < script.count ? script[index + 1] : defaultAction
            requests.append(
                Request(
                    index: index, action: action, method: method, path: path, headers: headers,
                    rawBody: body, envelope: envelope, elapsed: Date().timeIntervalSince(started)))
            return (action, next == .storeThenDrop)
        }
        changes.signal()
        return (action, nextDrops)
    }

    private static func parseHead(_ head: String) -> (String, String, [String: String])? {
        var lines = head.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (String(requestLine[0]), String(requestLine[1]), headers)
    }

    private static func reason(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }
}
