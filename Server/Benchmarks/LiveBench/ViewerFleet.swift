import IngestLoopback
import BeekonTesting
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Many raw SSE viewers on loopback sockets, read by one thread with poll(2). For every
/// `fix` event it records when it arrived, keyed by the fix id (the payload starts with
/// `{"id":"<uuid>"`).
final class ViewerFleet: @unchecked Sendable {
    private let lock = NSLock()
    private var fds: [Int32] = []
    private var carry: [Int32: [UInt8]] = [:]
    private var arrivals: [String: [Double]] = [:]
    private var fixCount = 0
    private var stopped = false
    private var thread: Thread?

    /// Opens `count` streams to `port` (optionally resuming after `lastEventID`).
    init(port: Int, count: Int, path: String = "/v1/live", lastEventID: String? = nil) throws {
        for _ in 0..<count {
            guard let fd = LoopbackSocket.connect(port: port, receiveTimeout: 60) else { throw BenchFailure("cannot connect viewer") }
            var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
            if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
            guard LoopbackSocket.sendAll(fd, Array((head + "\r\n").utf8)) else { throw BenchFailure("cannot send viewer request") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            fds.append(fd)
        }
        let t = Thread { [self] in readLoop() }
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    /// Fix events received in total (all viewers).
    var received: Int { lock.withLock { fixCount } }

    /// Arrival times (monotonic seconds) of the fix with `id` at every viewer that got it.
    func arrivals(of id: String) -> [Double] { lock.withLock { arrivals[id] ?? [] } }

    func close() {
        lock.withLock { stopped = true }
        for fd in fds { Glibc.close(fd) }
    }

    private static let marker = Array("data: {\"id\":\"".utf8)

    private func readLoop() {
        var polls = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !lock.withLock({ stopped }) {
            let n = poll(&polls, nfds_t(polls.count), 100)
            guard n > 0 else { continue }
            let now = Bench.now()
            for i in polls.indices where polls[i].revents & Int16(POLLIN) != 0 {
                let fd = polls[i].fd
                let r = recv(fd, &buffer, buffer.count, 0)
                guard r > 0 else { continue }
                var bytes = (carry[fd] ?? []) + buffer[0..<r]
                var ids: [String] = []
                var start = 0
                while let at = Self.find(Self.marker, in: bytes, from: start) {
                    let idStart = at + Self.marker.count
                    guard idStart + 36 <= bytes.count else { break }
                    ids.append(String(decoding: bytes[idStart..<idStart + 36], as: UTF8.self))
                    start = idStart + 36
                }
                let keep = max(start, bytes.count - Self.marker.count - 36)
                bytes.removeFirst(min(keep, bytes.count))
                carry[fd] = bytes
                if !ids.isEmpty {
                    lock.withLock {
                        fixCount += ids.count
                        for id in ids { arrivals[id, default: []].append(now) }
                    }
                }
            }
        }
    }

    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard bytes.count - from >= pattern.count else { return nil }
        var i = from
        while i <= bytes.count - pattern.count {
            if bytes[i] == pattern[0] && bytes[i..<i + pattern.count].elementsEqual(pattern) { return i }
            i += 1
        }
        return nil
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
