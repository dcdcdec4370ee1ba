import BeekonPrimitives
import CEpoll
import Foundation
import IngestLoopback
#if canImport(Glibc)
    import Glibc
#endif

/// Many raw SSE viewers on loopback sockets, read by one thread with epoll(7). For every
/// `fix` event it records when it arrived, keyed by the fix id (the payload starts with
/// `{"id":"<uuid>"`). Used by LiveBench and by `beekon-load --viewers`.
///
/// epoll, not poll(2): a `poll` costs the kernel a look at every socket of the fleet, and
/// while a server writes one event to its viewers the reader calls it again and again, each
/// time finding a few sockets ready. At 10,000 viewers that made the reader use 10.4 s of
/// CPU against the two servers' 15.4 s (issue 32), on the cores the servers and PostgreSQL
/// share, so it slowed the very delivery it measured. `epoll_wait` costs only what is ready.
///
/// `@unchecked` for `fds` and `epoll` (set in `init`, closed after the reader thread ended) and
/// `thread`; what several threads share is inside `counts`.
public final class ViewerFleet: @unchecked Sendable {
    private struct Counts {
        var arrivals: [FixKey: [Double]] = [:]
        var fixes = 0
        var heads = 0
        var closed = 0
        var stopped = false
    }

    private let counts = Locked(Counts())
    /// Bumped after every read that changed ``received``, ``answered`` or ``closedByServer``:
    /// a caller waits on it (``ChangeSignal/wait(timeout:_:)``) instead of polling.
    public let changes = ChangeSignal()
    private var fds: [Int32] = []
    /// The epoll instance every stream is registered with (its index as the event's data).
    private let epoll: Int32
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private let now: @Sendable () -> Double

    /// The fleet could not open a stream.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// Seconds on the monotonic clock (`DispatchTime` uptime), the time base of ``arrivals(of:)``.
    public static func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Opens `count` streams to `port` on 127.0.0.1 (optionally resuming after `lastEventID`,
    /// with an `Authorization` header value when given); arrival times are read from `now`.
    public init(
        port: Int, count: Int, path: String = "/v1/live", lastEventID: String? = nil, authorization: String? = nil,
        now: @escaping @Sendable () -> Double = ViewerFleet.monotonicSeconds
    ) throws {
        self.now = now
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw Failure(description: "epoll_create1: errno \(errno)") }
        for _ in 0..<count {
            guard let fd = LoopbackSocket.connect(port: port, receiveTimeout: 60) else {
                for fd in fds + [epoll] { Glibc.close(fd) }
                throw Failure(description: "cannot connect viewer \(fds.count + 1) to port \(port)")
            }
            var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
            if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
            if let authorization { head += "Authorization: \(authorization)\r\n" }
            guard LoopbackSocket.sendAll(fd, Array((head + "\r\n").utf8)) else {
                for fd in fds + [fd, epoll] { Glibc.close(fd) }
                throw Failure(description: "cannot send viewer request")
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            // Level-triggered: a stream with more than one read's worth pending is reported again.
            var interest = epoll_event()
            interest.events = EPOLLIN.rawValue
            interest.data.u32 = UInt32(fds.count)
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &interest) == 0 else {
                let code = errno
                for fd in fds + [fd, epoll] { Glibc.close(fd) }
                throw Failure(description: "epoll_ctl: errno \(code)")
            }
            fds.append(fd)
        }
        let t = Thread { [self] in readLoop() }
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    /// Resident set size of process `pid` in KiB (VmRSS; 0 when unreadable), for the per-viewer memory figures.
    public static func rssKiB(pid: Int32) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// Fix events received in total (all viewers).
    public var received: Int { counts.withLock { $0.fixes } }

    /// Response heads received in total (all connections; one each once the server answered).
    public var answered: Int { counts.withLock { $0.heads } }

    /// Streams the server closed (end of stream or a reset); they are read no more.
    public var closedByServer: Int { counts.withLock { $0.closed } }

    /// Arrival times (monotonic seconds) of the fix with `id` at every viewer that got it.
    public func arrivals(of id: String) -> [Double] {
        let key = Array(id.utf8).withUnsafeBytes { FixKey($0) }
        return counts.withLock { $0.arrivals[key] ?? [] }
    }

    /// Stops the reader and closes every stream. The sockets are closed only after the reader
    /// thread has exited, so it can never read from a number a later connection reuses.
    public func close() {
        let wasRunning = counts.withLock { c -> Bool in
            defer { c.stopped = true }
            return !c.stopped
        }
        guard wasRunning else { return }
        finished.wait()
        for fd in fds + [epoll] { Glibc.close(fd) }
    }

    private static let head = Array("HTTP/1.1 ".utf8)

    /// The reader stamps every fix found after an `epoll_wait` with the time it returned, so
    /// its own work must stay small next to the latencies it measures (issue 32: at 5,000
    /// viewers a thread, a per-read array copy and a `String` per fix per viewer made the
    /// client the bottleneck, and so did `poll(2)` over every socket). Each read is scanned in
    /// place (`memchr`, `memcmp`); only a partial frame's tail is carried to the next read, and
    /// the ids go to the shared table once per wait.
    private func readLoop() {
        defer { finished.signal() }
        var ready = [epoll_event](repeating: epoll_event(), count: 1_024)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var scanners = [FixScanner](repeating: FixScanner(), count: fds.count)
        var started = [Bool](repeating: false, count: fds.count)
        var found: [FixKey] = []
        while !counts.withLock({ $0.stopped }) {
            let n = epoll_wait(epoll, &ready, Int32(ready.count), 100)
            guard n > 0 else { continue }
            let now = self.now()
            var heads = 0
            var closed = 0
            found.removeAll(keepingCapacity: true)
            for k in 0..<Int(n) {
                let i = Int(ready[k].data.u32)
                guard i < fds.count else { continue }
                let r = recv(fds[i], &buffer, buffer.count, 0)
                guard r > 0 else {
                    if r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                        // Read no more: out of the interest list, so no later wait reports it (the
                        // number stays open until `close()`; one wait reports a stream at most once).
                        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, fds[i], nil)
                        closed += 1
                    }
                    continue
                }
                if !started[i] {
                    started[i] = true
                    if r >= Self.head.count, buffer[0..<Self.head.count].elementsEqual(Self.head) { heads += 1 }
                }
                buffer.withUnsafeBytes { scanners[i].feed(UnsafeRawBufferPointer(rebasing: $0[0..<r]), into: &found) }
            }
            guard heads > 0 || closed > 0 || !found.isEmpty else { continue }
            counts.withLock { c in
                c.heads += heads
                c.closed += closed
                c.fixes += found.count
                for key in found { c.arrivals[key, default: []].append(now) }
            }
            changes.signal()
        }
    }
}

/// One stream's fix ids, read after read: a read is scanned in place (`memchr`, `memcmp`) and
/// only a partial frame's tail is carried to the next read (which is then scanned with it), so
/// a frame cut anywhere (in its marker, in its id) is counted once, when its id is whole.
struct FixScanner {
    static let marker = Array("data: {\"id\":\"".utf8)
    /// The unscanned tail of the previous reads.
    private(set) var carry: [UInt8] = []

    /// Appends the id of every frame completed by `bytes` (the stream's next read) to `found`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, into found: inout [FixKey]) {
        if carry.isEmpty {
            let rest = Self.scan(bytes, into: &found)
            if rest < bytes.count { carry = Array(bytes[rest...]) }
        } else {
            // A frame cut by the last read: scanned with this one (rare: see `scan`).
            carry += bytes
            let rest = carry.withUnsafeBytes { Self.scan($0, into: &found) }
            carry = Array(carry[rest...])
        }
    }

    /// Appends the id of every whole `data: {"id":"<uuid>"` in `bytes` to `found`; returns
    /// where the unscanned tail starts (a marker or id that may continue in the next read).
    static func scan(_ bytes: UnsafeRawBufferPointer, into found: inout [FixKey]) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        var start = 0
        while start < bytes.count {
            guard let at = find(in: base, count: bytes.count, from: start) else { break }
            let idStart = at + marker.count
            guard idStart + 36 <= bytes.count else { return at }
            found.append(FixKey(UnsafeRawBufferPointer(rebasing: bytes[idStart..<idStart + 36])))
            start = idStart + 36
        }
        // Keep only what could be the start of a marker cut by the end of this read: the longest
        // tail that is a prefix of the marker (usually none: a read mostly ends with a frame's
        // blank line, so the next read is scanned in place, not copied).
        var keep = min(marker.count - 1, bytes.count - start)
        while keep > 0, memcmp(base + bytes.count - keep, marker, keep) != 0 { keep -= 1 }
        return bytes.count - keep
    }

    /// Where the next marker starts in `base[from..<count]`: `memchr` for its first byte, then `memcmp`.
    private static func find(in base: UnsafeRawPointer, count: Int, from: Int) -> Int? {
        marker.withUnsafeBytes { m in
            var i = from
            while i + m.count <= count {
                guard let p = memchr(base + i, Int32(m[0]), count - m.count + 1 - i) else { return nil }
                let at = base.distance(to: UnsafeRawPointer(p))
                if memcmp(base + at, m.baseAddress!, m.count) == 0 { return at }
                i = at + 1
            }
            return nil
        }
    }
}

/// A fix id's 36 characters as a fixed-size key: no `String` (and no allocation) per arrival.
struct FixKey: Hashable {
    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)

    /// The key of up to 40 bytes of an id's text.
    init(_ text: UnsafeRawBufferPointer) {
        withUnsafeMutableBytes(of: &words) { w in
            w.copyMemory(from: UnsafeRawBufferPointer(rebasing: text.prefix(w.count)))
        }
    }

    static func == (a: FixKey, b: FixKey) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2 && a.words.3 == b.words.3
            && a.words.4 == b.words.4
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
        hasher.combine(words.4)
    }
}
