import BeekonLoopback
import Foundation
import Testing
import Beekon
@testable import BeekonSources
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A send to a peer that has closed the connection is an error the caller
/// sees, never a SIGPIPE, which would end the process (an app, or the whole test run). Linux
/// sends with `MSG_NOSIGNAL`; Darwin has no such flag and needs `SO_NOSIGPIPE` on the socket.
/// Without either this suite's process dies instead of failing an expectation.
@Suite struct PeerClosedSendTests {
    /// Closes `fd` with a reset (linger 0), so the peer's next send meets EPIPE at once.
    static func reset(_ fd: Int32) {
        var linger = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }

    /// Waits (bounded) until the reset has reached `fd`: a read then fails or sees the end.
    static func awaitReset(_ fd: Int32) {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, 10_000)
    }

    @Test func loopbackSendToAClosedPeerReturnsFalse() throws {
        let (listener, port) = try LoopbackSocket.listen()
        defer { close(listener) }
        let client = try #require(LoopbackSocket.connect(port: port))
        defer { close(client) }
        let server = try #require(LoopbackSocket.accept(listener))
        Self.reset(server)
        Self.awaitReset(client)
        // The first failed send may say ECONNRESET; the ones after it are EPIPE, the SIGPIPE case.
        for _ in 0..<3 { #expect(!LoopbackSocket.sendAll(client, Array(repeating: UInt8(0x61), count: 4096))) }
    }

    @Test func gpsdWatchToAClosedPeerThrows() throws {
        let (listener, port) = try LoopbackSocket.listen()
        defer { close(listener) }
        let socket = GPSDSocket(host: "127.0.0.1", port: port, connectTimeout: .seconds(10), settle: 0)
        let client = try socket.open()
        defer { close(client) }
        let server = try #require(LoopbackSocket.accept(listener))
        Self.reset(server)
        Self.awaitReset(client)
        for mode in [PowerMode.balanced, .paused, .balanced] {
            #expect(throws: ByteSourceError.self) { try socket.apply(mode, fd: client) }
        }
    }
}
