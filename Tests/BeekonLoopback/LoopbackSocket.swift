import Foundation
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Plain POSIX TCP on 127.0.0.1 for fake servers, proxies and receivers in tests and
/// benchmarks: nothing between the bytes and the kernel, so a test can drop a connection
/// after a request, hold it open, or answer late, exactly when it means to. Test plumbing
/// of this repository, not a product: the Server package compiles this same file through
/// the symlink Server/Tests/IngestLoopback/LoopbackSocket.swift.
public enum LoopbackSocket {
    /// Why a socket could not be set up.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What failed, with `errno`.
        public var description: String
    }

    #if canImport(Glibc)
        static let streamType = Int32(SOCK_STREAM.rawValue)
        static let noSignal = Int32(MSG_NOSIGNAL)
    #else
        static let streamType = SOCK_STREAM
        static let noSignal: Int32 = 0
    #endif

    /// Darwin has no `MSG_NOSIGNAL`: a send to a peer that has gone raises SIGPIPE, which ends
    /// the process (a whole test run), unless the socket itself says `SO_NOSIGPIPE`. Linux
    /// sends with `MSG_NOSIGNAL` instead (`noSignal`). Applied to every socket this type makes.
    static func noSigPipe(_ fd: Int32) {
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// A listening socket on 127.0.0.1 with a port picked by the OS.
    public static func listen(backlog: Int32 = 64) throws(Failure) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        noSigPipe(fd)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #if canImport(Glibc)
            let listening = Glibc.listen(fd, backlog)
        #else
            let listening = Darwin.listen(fd, backlog)
        #endif
        guard bound == 0, listening == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "bind/listen: errno \(code)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The next connection on `listener` with Nagle off; nil once the listener is closed.
    public static func accept(_ listener: Int32) -> Int32? {
        while true {
            #if canImport(Glibc)
                let fd = Glibc.accept(listener, nil, nil)
            #else
                let fd = Darwin.accept(listener, nil, nil)
            #endif
            if fd < 0 {
                if errno == EINTR { continue }
                return nil
            }
            noSigPipe(fd)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
    }

    /// A connection to 127.0.0.1:`port` whose reads give up after `receiveTimeout` seconds,
    /// with a receive buffer of `receiveBuffer` bytes when given (set before connecting, so the
    /// window announced to the peer is small: a reader that stops reading), from the loopback
    /// address `source` when given (`127.0.0.2`: another client as the server sees it); nil when
    /// nothing listens there.
    public static func connect(port: Int, receiveTimeout: Int = 40, receiveBuffer: Int32? = nil, source: String? = nil) -> Int32? {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { return nil }
        noSigPipe(fd)
        if let source {
            // Another loopback address (127.0.0.2, …): another client as the server sees it.
            var local = loopback(port: 0)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(fd)
                return nil
            }
        }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            #if canImport(Glibc)
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            #else
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Darwin.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            #endif
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Sends every byte (no SIGPIPE); false when the peer is gone.
    @discardableResult
    public static func sendAll(_ fd: Int32, _ bytes: some DataProtocol) -> Bool {
        let data = Array(bytes)
        return data.withUnsafeBytes { buffer in
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

    /// Waits until something accepts connections on 127.0.0.1:`port` (a child process's server
    /// that announces nothing when it is up, like gpsd under gpsfake), trying every 50 ms; false
    /// when `timeout` passed first. The probe connection is closed at once. The timeout only
    /// bounds a failure: a python start-up on a loaded 2-core machine took over 20 s.
    public static func waitUntilAccepting(port: Int, timeout: Duration = .seconds(120)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let fd = connect(port: port) {
                close(fd)
                return true
            }
            try? await Task.sleep(for: .milliseconds(50))  // polling a port that announces nothing, bounded by the deadline
        }
        return false
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (for a server started by a test,
    /// e.g. gpsfake or PostgreSQL, that must be told its port).
    public static func freePort() -> Int {
        guard let (fd, port) = try? listen(backlog: 1) else { return 0 }
        close(fd)
        return port
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}

/// Buffered reads of HTTP/1.1 messages from a socket: the head, then a sized or chunked body.
public struct HTTPMessageReader {
    /// The socket read from.
    public let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    /// Reads from `fd` (the caller owns and closes it).
    public init(fd: Int32) { self.fd = fd }

    /// The start line and headers, without the blank line; nil at EOF or on a read error.
    public mutating func readHead() -> String? {
        readUntil([13, 10, 13, 10])
    }

    /// Exactly `count` bytes; nil at EOF before that.
    public mutating func read(count: Int) -> [UInt8]? {
        while buffer.count - start < count {
            guard fill() else { return nil }
        }
        defer { start += count }
        return Array(buffer[start..<start + count])
    }

    /// The body as the headers (lowercased names) describe it: chunked (trailers skipped),
    /// else `content-length` bytes (none without it).
    public mutating func readBody(headers: [String: String]) -> [UInt8]? {
        guard headers["transfer-encoding"]?.lowercased().contains("chunked") == true else {
            return read(count: Int(headers["content-length"] ?? "0") ?? 0)
        }
        var body: [UInt8] = []
        while true {
            guard let line = readUntil([13, 10]), let size = Int(line.split(separator: ";").first ?? "", radix: 16) else { return nil }
            if size == 0 {
                while let trailer = readUntil([13, 10]), !trailer.isEmpty {}
                return body
            }
            guard let chunk = read(count: size), readUntil([13, 10]) != nil else { return nil }
            body += chunk
        }
    }

    /// The payload of the next chunk of a chunked body, read one at a time (a stream that
    /// never ends); nil at EOF, on a read timeout or on the last (zero-size) chunk.
    public mutating func readChunk() -> [UInt8]? {
        guard let line = readUntil([13, 10]), let size = Int(line.split(separator: ";").first ?? "", radix: 16), size > 0,
            let chunk = read(count: size), readUntil([13, 10]) != nil
        else { return nil }
        return chunk
    }

    /// The text before `separator` (consumed with it); nil at EOF.
    private mutating func readUntil(_ separator: [UInt8]) -> String? {
        while true {
            if let i = find(separator, from: start) {
                let text = String(decoding: buffer[start..<i], as: UTF8.self)
                start = i + separator.count
                return text
            }
            guard fill() else { return nil }
        }
    }

    private func find(_ pattern: [UInt8], from: Int) -> Int? {
        guard buffer.count - from >= pattern.count else { return nil }
        var i = from
        while i <= buffer.count - pattern.count {
            if buffer[i] == pattern[0] && buffer[i..<i + pattern.count].elementsEqual(pattern) { return i }
            i += 1
        }
        return nil
    }

    /// More bytes from the socket; false at EOF or on an error.
    private mutating func fill() -> Bool {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
    }
}
