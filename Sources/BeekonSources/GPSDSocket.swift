import BeekonPrimitives
import Foundation
import Beekon
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The gpsd side of a `ReconnectingReader`: a TCP connection with a watch,
/// decoded by a `GPSDFixAssembler`. Used by one reader thread at a time.
final class GPSDSocket: ByteSource, @unchecked Sendable {
    let host: String
    let port: Int
    let connectTimeout: Duration
    private let assembler: Locked<GPSDFixAssembler>

    /// `?WATCH` that turns JSON reports on.
    static let watchOn = Array(#"?WATCH={"enable":true,"json":true};"#.utf8) + [0x0A]
    /// `?WATCH` that turns reports off, so gpsd may close the device and the receiver can sleep.
    static let watchOff = Array(#"?WATCH={"enable":false};"#.utf8) + [0x0A]

    init(host: String, port: Int, connectTimeout: Duration, settle: Double) {
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
        self.assembler = Locked(GPSDFixAssembler(settle: settle))
    }

    var name: String { host.contains(":") ? "gpsd at [\(host)]:\(port)" : "gpsd at \(host):\(port)" }
    var endOfFileFinishes: Bool { false }
    var statistics: GPSDStatistics { assembler.withLock { $0.statistics } }

    func open() throws(ByteSourceError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw ByteSourceError(message: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var ai: UnsafeMutablePointer<addrinfo>? = first
        while let a = ai {
            ai = a.pointee.ai_next
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype, a.pointee.ai_protocol)
            if fd < 0 {
                lastError = ReconnectingReader.errnoText()
                continue
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            #if canImport(Darwin)
                // Darwin has no MSG_NOSIGNAL (`apply` uses it on Linux): without this a ?WATCH sent
                // after gpsd closed the connection raises SIGPIPE and ends the app.
                var one: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            if let error = Self.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen, timeout: connectTimeout) {
                lastError = error
                close(fd)
                continue
            }
            assembler.withLock { $0.connected() }
            return fd
        }
        throw ByteSourceError(message: lastError)
    }

    /// Non-blocking connect bounded by `timeout`; nil on success, else the error text.
    private static func connect(
        _ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>?, _ len: socklen_t,
        timeout: Duration
    ) -> String? {
        #if canImport(Glibc)
            let rc = Glibc.connect(fd, addr, len)
        #else
            let rc = Darwin.connect(fd, addr, len)
        #endif
        if rc == 0 { return nil }
        guard errno == EINPROGRESS else { return ReconnectingReader.errnoText() }
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let millis = Int32(max(1, min(timeout.seconds * 1000, 600_000)))
        var n: Int32
        repeat { n = poll(&p, 1, millis) } while n < 0 && errno == EINTR
        if n == 0 { return "connect timed out after \(ReconnectingReader.format(timeout.seconds)) s" }
        var soError: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &size)
        return soError == 0 ? nil : ReconnectingReader.errnoText(soError)
    }

    func apply(_ mode: PowerMode, fd: Int32) throws(ByteSourceError) {
        let line = mode == .paused ? Self.watchOff : Self.watchOn
        var sent = 0
        let deadline = ReconnectingReader.now() + 5
        while sent < line.count {
            #if canImport(Glibc)
                let flags = Int32(MSG_NOSIGNAL)
            #else
                let flags: Int32 = 0  // SO_NOSIGPIPE is set on the socket (`open`)
            #endif
            let n = line[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, flags) }
            if n > 0 {
                sent += n
                continue
            }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR, ReconnectingReader.now() < deadline {
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, 100)
                continue
            }
            throw ByteSourceError(message: "cannot send ?WATCH: \(ReconnectingReader.errnoText())")
        }
    }

    func consume(_ bytes: ArraySlice<UInt8>, now: Double) -> [RawFix] {
        assembler.withLock { $0.feed(bytes, now: now) }
    }

    func idle(now: Double) -> [RawFix] { assembler.withLock { $0.idle(now: now) } }

    func closed() -> [RawFix] { assembler.withLock { $0.flush() } }
}
