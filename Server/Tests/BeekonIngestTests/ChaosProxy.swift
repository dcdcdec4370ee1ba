import BeekonIngest
import BeekonWire
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

    private let listenFD: Int32
    private let lock = NSLock()
    private var upstream: Int
    private var exchanges: [Exchange] = []
    private var openFDs: Set<Int32> = []
    private var stopped = false
    private let decide: @Sendable (Int) -> Fault
    private let onCommitted: @Sendable (Int) -> Void

    /// `decide(i)` picks the fault of request `i` (0-based, arrival order); `onCommitted(i)`
    /// runs for `.forwardThenAct` after the server answered and before the connection drops.
    init(upstreamPort: Int, decide: @escaping @Sendable (Int) -> Fault,
         onCommitted: @escaping @Sendable (Int) -> Void = { _ in }) throws {
        upstream = upstreamPort
        self.decide = decide
        self.onCommitted = onCommitted
        let fd = socket(AF_INET, Self.streamType, 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw TestFailure("bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    /// Points the proxy at a restarted server.
    func setUpstream(port: Int) { lock.withLock { upstream = port } }

    var log: [Exchange] { lock.withLock { exchanges } }

    /// One line per exchange, for failure messages.
    var summary: String {
        log.map { "#\($0.index) \($0.batchID?.wireString ?? "?") ×\($0.locationIDs.count) \($0.fault) → \($0.upstreamStatus.map(String.init) ?? "-")" }
            .joined(separator: "\n")
    }

    /// Waits (bounded) until `predicate` holds for the exchanges so far.
    func waitFor(_ what: String, timeout: Duration = .seconds(30), _ predicate: @escaping @Sendable ([Exchange]) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !predicate(log) {
            guard ContinuousClock.now < deadline else { throw TestFailure("timed out waiting for \(what); proxy saw:\n\(summary)") }
            try await Task.sleep(for: .milliseconds(20)) // polling a condition, bounded by the deadline
        }
    }

    func stop() {
        let fds: Set<Int32>? = lock.withLock {
            guard !stopped else { return nil }
            stopped = true
            return openFDs
        }
        guard let fds else { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    // MARK: - Proxy

    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let noSignal: Int32 = 0
    #endif

    private static func loopback(port: Int) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = UInt16(port).bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return a
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let keep: Bool = lock.withLock {
                guard !stopped else { return false }
                openFDs.insert(fd)
                return true
            }
            guard keep else { close(fd); return }
            Thread { [self] in
                serve(fd)
                lock.withLock { _ = openFDs.remove(fd) }
                shutdown(fd, Int32(SHUT_RDWR))
                close(fd)
            }.start()
        }
    }

    private func serve(_ fd: Int32) {
        var reader = ByteReader(fd: fd)
        while let head = reader.head() {
            guard let request = HTTPHead(head) else { return }
            if request.headers["expect"]?.lowercased() == "100-continue" {
                guard Self.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
            }
            guard let body = reader.body(request.headers) else { return }
            let (index, fault) = record(path: request.path, body: body, headers: request.headers)
            switch fault {
            case .status(let code, let retryAfter):
                let extra = retryAfter.map { "Retry-After: \($0)\r\n" } ?? ""
                guard Self.sendAll(fd, Array("HTTP/1.1 \(code) Fault\r\nContent-Length: 2\r\n\(extra)\r\n{}".utf8)) else { return }
                continue
            case .delay(let seconds):
                Thread.sleep(forTimeInterval: seconds) // the fault itself: a slow network
            case .pass, .loseAnswer, .forwardThenAct:
                break
            }
            let answer = forward(request, body: body)
            lock.withLock {
                exchanges[index].upstreamStatus = answer?.status
                exchanges[index].responseBody = answer?.body ?? []
            }
            guard let answer else { return } // server down: the agent sees the connection close
            switch fault {
            case .loseAnswer: return
            case .forwardThenAct:
                onCommitted(index)
                return
            default:
                guard Self.sendAll(fd, answer.bytes) else { return }
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
        return lock.withLock {
            let index = exchanges.count
            let fault = decide(index)
            exchanges.append(Exchange(index: index, fault: fault, batchID: batch, locationIDs: ids, path: path,
                                      authorization: headers["authorization"]))
            return (index, fault)
        }
    }

    /// One exchange with the server; nil when it is unreachable or hangs up.
    private func forward(_ request: HTTPHead, body: [UInt8]) -> (status: Int, bytes: [UInt8], body: [UInt8])? {
        let fd = socket(AF_INET, Self.streamType, 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 40, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = Self.loopback(port: lock.withLock { upstream })
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        var head = "\(request.method) \(request.path) HTTP/1.1\r\n"
        for (k, v) in request.headers where !["connection", "content-length", "transfer-encoding", "keep-alive", "expect"].contains(k) {
            head += "\(k): \(v)\r\n"
        }
        head += "content-length: \(body.count)\r\nconnection: close\r\n\r\n"
        guard Self.sendAll(fd, Array(head.utf8) + body) else { return nil }
        var reader = ByteReader(fd: fd)
        guard let responseHead = reader.head(), let statusLine = responseHead.split(separator: "\r\n").first else { return nil }
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in responseHead.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        guard let responseBody = reader.body(headers) else { return nil }
        var out = "HTTP/1.1 \(status) Relayed\r\ncontent-length: \(responseBody.count)\r\n"
        for k in ["content-type", "retry-after", "www-authenticate"] { if let v = headers[k] { out += "\(k): \(v)\r\n" } }
        out += "\r\n"
        return (status, Array(out.utf8) + responseBody, responseBody)
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = send(fd, buffer.baseAddress! + offset, buffer.count - offset, noSignal)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
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
        method = String(first[0]); path = String(first[1])
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
}

/// Buffered socket reads: a message head, then a sized, chunked or until-EOF body.
private struct ByteReader {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    private mutating func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for i in 0...(buffer.count - pattern.count) where buffer[i] == pattern[0] && Array(buffer[i..<i + pattern.count]) == pattern {
            return i
        }
        return nil
    }

    mutating func head() -> String? {
        while true {
            if let i = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[0..<i], as: UTF8.self)
                buffer.removeFirst(i + 4)
                return head
            }
            guard fill() else { return nil }
        }
    }

    mutating func read(_ count: Int) -> [UInt8]? {
        while buffer.count < count { guard fill() else { return nil } }
        defer { buffer.removeFirst(count) }
        return Array(buffer[0..<count])
    }

    private mutating func line() -> String? {
        while true {
            if let i = find([13, 10]) {
                defer { buffer.removeFirst(i + 2) }
                return String(decoding: buffer[0..<i], as: UTF8.self)
            }
            guard fill() else { return nil }
        }
    }

    mutating func body(_ headers: [String: String]) -> [UInt8]? {
        if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            var body: [UInt8] = []
            while true {
                guard let l = line(), let size = Int(l.split(separator: ";").first ?? "", radix: 16) else { return nil }
                if size == 0 {
                    while let trailer = line(), !trailer.isEmpty {}
                    return body
                }
                guard let chunk = read(size), line() != nil else { return nil }
                body += chunk
            }
        }
        return read(Int(headers["content-length"] ?? "0") ?? 0)
    }
}
