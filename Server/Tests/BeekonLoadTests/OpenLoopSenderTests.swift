import BeekonLoad
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback HTTP/1.1 server for the sender: `/ok` answers 200, `/fail` 503, `/drop` closes
/// the connection without an answer; it counts the connections it accepted.
private final class LoopbackServer: @unchecked Sendable {
    private let lock = NSLock()
    private var accepted = 0
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private(set) var channel: Channel!

    var connections: Int { lock.withLock { accepted } }

    init() throws {
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                self.lock.withLock { self.accepted += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Answerer())
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    var address: SocketAddress { channel.localAddress! }

    func stop() throws {
        try channel.close().wait()
        try group.syncShutdownGracefully()
    }

    private final class Answerer: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private var uri = ""

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): uri = head.uri
            case .body: break
            case .end:
                guard uri != "/drop" else { return context.close(promise: nil) }
                let head = HTTPResponseHead(
                    version: .http1_1, status: uri == "/fail" ? .serviceUnavailable : .ok, headers: ["Content-Length": "2"])
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "ok")))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}

/// The answers a run got, by request index, and how many came twice.
private final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var all: [Int: SentAnswer] = [:]
    private var twice = 0

    func add(_ answer: SentAnswer) {
        lock.withLock {
            if all[answer.index] != nil { twice += 1 }
            all[answer.index] = answer
        }
    }

    var byIndex: [Int: SentAnswer] { lock.withLock { all } }
    var duplicates: Int { lock.withLock { twice } }
}

@Suite("Open-loop sender (issue 32: one event loop, keep-alive connections, real loopback HTTP)")
struct OpenLoopSenderTests {
    static func requests(_ uris: [String]) -> [PreparedRequest] {
        uris.map { uri in
            PreparedRequest(
                target: 0,
                head: HTTPRequestHead(version: .http1_1, method: .POST, uri: uri, headers: ["Host": "127.0.0.1", "Content-Length": "4"]),
                body: ByteBuffer(string: "body"))
        }
    }

    /// Sends `uris` all due at once (a rate no schedule keeps up with) through a sender capped
    /// at `connections`; the answers by request index.
    static func send(_ uris: [String], to address: SocketAddress, connections: Int) async throws -> [Int: SentAnswer] {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sender = try OpenLoopSender(targets: [SenderTarget(address: address)], maxConnections: connections, eventLoop: loop.next())
        let answers = Answers()
        try await sender.send(requests(uris), on: OpenLoopSchedule(rate: 1e9, count: uris.count)) { answers.add($0) }.get()
        try await sender.close().get()
        try await loop.shutdownGracefully()
        #expect(answers.duplicates == 0)
        return answers.byIndex
    }

    @Test("every request is answered once; past the cap they wait for a connection and reuse it")
    func answeredOverAtMostTheCap() async throws {
        let server = try LoopbackServer()
        defer { try? server.stop() }
        let answers = try await Self.send(Array(repeating: "/ok", count: 40), to: server.address, connections: 3)
        #expect(answers.count == 40)
        #expect(answers.values.allSatisfy { $0.failure == nil && $0.latency >= .zero && $0.answeredAfter >= $0.latency })
        #expect(server.connections <= 3)
        #expect(server.connections >= 1)
    }

    @Test("a status other than 200 fails its request; a connection closed unanswered fails only its own")
    func failuresStayWithTheirRequest() async throws {
        let server = try LoopbackServer()
        defer { try? server.stop() }
        let uris = ["/ok", "/fail", "/ok", "/drop", "/ok", "/ok", "/drop", "/ok"]
        // One connection: each drop closes it, and the requests queued behind get a new one.
        let answers = try await Self.send(uris, to: server.address, connections: 1)
        #expect(answers.count == uris.count)
        for (i, uri) in uris.enumerated() {
            let expected: String? = uri == "/fail" ? "HTTP 503" : uri == "/drop" ? "connection closed" : nil
            #expect(answers[i]?.failure == expected, "request \(i) \(uri)")
        }
        #expect(server.connections == 3)
    }

    /// A loopback port that is bound but not listening (held until `release`), so a connect
    /// is refused and no other socket can take the port meanwhile (a port merely freed can
    /// be picked as the connecting socket's own, and Linux then connects the socket to itself).
    static func refusingPort() throws -> (port: Int, release: () -> Void) {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(fd >= 0 && bound, "could not bind a loopback socket")
        return (Int(UInt16(bigEndian: address.sin_port)), { close(fd) })
    }

    @Test("a server that is not listening fails every request, and the run still ends")
    func unreachableServer() async throws {
        let (port, release) = try Self.refusingPort()
        defer { release() }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        let answers = try await Self.send(["/ok", "/ok", "/ok"], to: address, connections: 2)
        #expect(answers.count == 3)
        #expect(answers.values.allSatisfy { $0.failure?.hasPrefix("connect: ") == true }, "\(answers.values.map(\.failure))")
    }
}
