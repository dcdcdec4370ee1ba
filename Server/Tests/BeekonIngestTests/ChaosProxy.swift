import IngestLoopback
import BeekonIngest
import BeekonWire
import BeekonTesting
import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fault-injecting HTTP/1.1 proxy on 127.0.0.1:<free port> between the real agent and a
/// real `beekon-ingest` (POSIX sockets, one thread per connection, keep-alive towards the
/// agent, one `Connection: close` exchange per request towards the server).
///
/// Every request is decoded and recorded (batch id, location ids) and gets the fault the
/// test's `decide` closure picks for it; the server's own status codes are recorded too,
/// so a test can check that the server never answered 500 to a well-formed batch.
final class ChaosProxy: @unchecked Sendable {
    enum Fault: Sendable, Equatable, CustomStringConvertible {
        /// Forward and relay the answer.
        case pass
        /// Forward (the server commits), then close the connection without an answer: the 2xx is lost.
        case loseAnswer
        /// Answer this status without forwarding (a proxy or overloaded server), with `Retry-After` if given.
        case status(Int, retryAfter: Int?)
        /// Forward, then run `onCommitted` (e.g. SIGKILL the agent) and drop the connection.
        case forwardThenAct
        /// Forward and wait this long before relaying the answer.
        case delay(seconds: Double)

        var description: String {
            switch self {
            case .pass: return "pass"
            case .loseAnswer: return "lose-answer"
            case .status(let s, let r): return r.map { "\(s) retry-after \($0)" } ?? "\(s)"
            case .forwardThenAct: return "forward+act"
            case .delay(let s): return "delay \(s)s"
            }
        }
    }

    struct Exchange: Sendable {
        var index: Int
        var fault: Fault
        var batchID: UUID?
        var locationIDs: [UUID]
        /// The server's status, nil when not forwarded or the server was unreachable.
        var upstreamStatus: Int?
        var path: String = ""
        /// The request's `Authorization` header, if any.
        var authorization: String?
        /// The server's answer body (when forwarded).
        var responseBody: [UInt8] = []
    }

    let port: Int
    var url: String { "http://127.0.0.1:\(port)/v1/locations" }

    private let listener: LoopbackListener
    private let lock = NSLock()
    private var upstream: Int
    private var exchanges: [Exchange] = []
    private let changes = ChangeSignal()
    private let decide: @Sendable (Int) -> Fault
    private let onCommitted: @Sendable (Int) -> Void

    /// `decide(i)` picks the fault of request `i` (0-based, arrival order); `onCommitted(i)`
    /// runs for `.forwardThenAct` after the server answered and before the connection drops.
    init(
        upstreamPort: Int, decide: @escaping @Sendable (Int) -> Fault,
        onCommitted: @escaping @Sendable (Int) -> Void = { _ in }
    ) throws {
        upstream = upstreamPort
        self.decide = decide
        self.onCommitted = onCommitted
        do { listener = try LoopbackListener() } catch { throw TestFailure(error.description) }
        port = listener.port
        listener.start { [self] fd in serve(fd) }
    }

    deinit { stop() }

    /// Points the proxy at a restarted server.
    func setUpstream(port: Int) { lock.withLock { upstream = port } }

    var log: [Exchange] { lock.withLock { exchanges } }

    /// One line per exchange, for failure messages.
    var summary: String {
        log.map {
            "#\($0.index) \($0.batchID?.wireString ?? "?") ×\($0.locationIDs.count) \($0.fault) → \($0.upstreamStatus.map(String.init) ?? "-")"
        }
        .joined(separator: "\n")
    }

    /// Waits (bounded) until `predicate` holds for the exchanges so far.
    func waitFor(_ what: String, timeout: Duration = .seconds(30), _ predicate: @escaping @Sendable ([Exchange]) -> Bool) async throws {
        let held = try await changes.wait(timeout: timeout) { [self] in predicate(log) ? true : nil }
        guard held != nil else { throw TestFailure("timed out waiting for \(what); proxy saw:\n\(summary)") }
    }

    func stop() {
        listener.stop()
    }

    // MARK: - Proxy

    private func serve(_ fd: Int32) {
        var reader = HTTPMessageReader(fd: fd)
        while let head = reader.readHead() {
            guard let request = HTTPHead(head) else { return }
            if request.headers["expect"]?.lowercased() == "100-continue" {
                guard LoopbackSocket.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
            }
            guard let body = reader.readBody(headers: request.headers) else { return }
            // The locate command channel's long poll (BY-2) is relayed untouched: faults are
            // scripted per upload, and a poll is not one.
            if request.method == "GET", request.path.contains("/commands") {
                guard let answer = forward(request, body: body), LoopbackSocket.sendAll(fd, answer.bytes) else { return }
                continue
            }
            let (index, fault) = record(path: request.path, body: body, headers: request.headers)
            switch fault {
            case .status(let code, let retryAfter):
                let extra = retryAfter.map { "Retry-After: \($0)\r\n" } ?? ""
                guard LoopbackSocket.sendAll(fd, Array("HTTP/1.1 \(code) Fault\r\nContent-Length: 2\r\n\(extra)\r\n{}".utf8)) else {
                    return
                }
                continue
            case .delay(let seconds):
                Thread.sleep(forTimeInterval: seconds)  // the fault itself: a slow network
            case .pass, .loseAnswer, .forwardThenAct:
                break
            }
            let answer = forward(request, body: body)
            lock.withLock {
                exchanges[index].upstreamStatus = answer?.status
                exchanges[index].responseBody = answer?.body ?? []
            }
            changes.signal()
            guard let answer else { return }  // server down: the agent sees the connection close
            switch fault {
            case .loseAnswer: return
            case .forwardThenAct:
                onCommitted(index)
                return
            default:
                guard LoopbackSocket.sendAll(fd, answer.bytes) else { return }
            }
        }
    }

    private func record(path: String, body: [UInt8], headers: [String: String]) -> (Int, Fault) {
        var batch: UUID?
        var ids: [UUID] = []
        let json = headers["content-encoding"]?.lowercased() == "gzip" ? try? Gzip.inflate(body, limit: 64 << 20) : body
        if let json, let envelope = try? WireEnvelope.decode(Data(json)) {
            batch = envelope.batchId
            ids = envelope.locations.map(\.id)
        }
        defer { changes.signal() }
        return lock.withLock {
            let index = exchanges.count
            let fault = decide(index)
            exchanges.append(
                Exchange(
                    index: index, fault: fault, batchID: batch, locationIDs: ids, path: path,
                    authorization: headers["authorization"]))
            return (index, fault)
        }
    }

    /// One exchange with the server; nil when it is unreachable or hangs up.
    private func forward(_ request: HTTPHead, body: [UInt8]) -> (status: Int, bytes: [UInt8], body: [UInt8])? {
        guard let fd = LoopbackSocket.connect(port: lock.withLock { upstream }) else { return nil }
        defer { close(fd) }
        var head = "\(request.method) \(request.path) HTTP/1.1\r\n"
        for (k, v) in request.headers where !["connection", "content-length", "transfer-encoding", "keep-alive", "expect"].contains(k) {
            head += "\(k): \(v)\r\n"
        }
        head += "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
        guard LoopbackSocket.sendAll(fd, Array(head.utf8) + body) else { return nil }
        var reader = HTTPMessageReader(fd: fd)
        guard let responseHead = reader.readHead(), let statusLine = responseHead.split(separator: "\r\n").first else { return nil }
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in responseHead.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let responseBody = reader.readBody(headers: headers) else { return nil }
        var out = "HTTP/1.1 \(status) Relayed\r\ncontent-length: \(responseBody.count)\r\n"
        for k in ["content-type", "retry-after", "www-authenticate"] { if let v = headers[k] { out += "\(k): \(v)\r\n" } }
        out += "\r\n"
        return (status, Array(out.utf8) + responseBody, responseBody)
    }
}

/// A request line and lowercased headers.
private struct HTTPHead {
    var method: String
    var path: String
    var headers: [String: String] = [:]

    init?(_ head: String) {
        let lines = head.components(separatedBy: "\r\n")
        let first = lines[0].split(separator: " ")
        guard first.count >= 2 else { return nil }
        method = String(first[0])
        path = String(first[1])
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
}
