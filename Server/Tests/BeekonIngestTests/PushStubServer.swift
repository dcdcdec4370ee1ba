@testable import BeekonIngest
import BeekonPrimitives
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// One request a stub push provider received.
struct StubRequest: Sendable {
    let method: String
    let path: String
    let majorVersion: Int
    let headers: [(String, String)]
    let body: [UInt8]

    /// The first value of header `name` (case-insensitive).
    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
}

/// What a stub push provider answers.
struct StubResponse: Sendable {
    var status: Int
    var body: String = ""
    var headers: [(String, String)] = []
}

/// A local HTTP/2-only server over TLS (NIOHTTP2 + NIOSSL, ALPN `h2`) standing where APNs or
/// FCM stands (issue 30): it records every request and answers with `handle`. It speaks no
/// HTTP/1, so a client that did not negotiate HTTP/2 gets nothing from it.
final class StubHTTP2Server: Sendable {
    let port: Int
    let received = Locked<[StubRequest]>([])
    private let channel: any Channel

    var base: String { "https://127.0.0.1:\(port)" }

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    static func start(pki: TestPKI, handle: @escaping @Sendable (StubRequest) -> StubResponse) async throws -> StubHTTP2Server {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(pki.certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: pki.key, format: .pem)))
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let box = Locked<StubHTTP2Server?>(nil)
        let record: @Sendable (StubRequest) -> Void = { r in box.value?.received.withLock { $0.append(r) } }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandlers([
                                HTTP2FramePayloadToHTTP1ServerCodec(), StubStreamHandler(record: record, handle: handle),
                            ])
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = StubHTTP2Server(channel: channel)
        box.value = server
        return server
    }

    /// The requests so far.
    var requests: [StubRequest] { received.value }

    func stop() async throws { try await channel.close() }
}

/// One HTTP/2 stream: collects the request, records it, answers.
private final class StubStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let record: @Sendable (StubRequest) -> Void
    private let handle: @Sendable (StubRequest) -> StubResponse
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(record: @escaping @Sendable (StubRequest) -> Void, handle: @escaping @Sendable (StubRequest) -> StubResponse) {
        self.record = record
        self.handle = handle
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h): head = h
        case .body(var b): body += b.readBytes(length: b.readableBytes) ?? []
        case .end:
            guard let head else { return }
            let request = StubRequest(
                method: head.method.rawValue, path: head.uri, majorVersion: head.version.major,
                headers: head.headers.map { ($0.name, $0.value) }, body: body)
            record(request)
            let response = handle(request)
            var headers = HTTPHeaders(response.headers)
            headers.add(name: "content-length", value: String(response.body.utf8.count))
            context.write(
                wrapOutboundOut(
                    .head(HTTPResponseHead(version: head.version, status: .init(statusCode: response.status), headers: headers))),
                promise: nil)
            if !response.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: response.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
