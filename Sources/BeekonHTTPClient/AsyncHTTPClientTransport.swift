import AsyncHTTPClient
import Beekon
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The Linux agent's `HTTPTransport`: AsyncHTTPClient on SwiftNIO, with a keep-alive
/// connection pool (HTTP/1.1, and HTTP/2 where TLS negotiates it), redirects refused,
/// a hard deadline per exchange and optional extra trusted CA certificates
/// (`sync.trustedCertificates`).
///
/// A kept-alive connection that the server (or a proxy, or a NAT) closes after it read
/// the request but before it answered ends the exchange at once with
/// `.network("connection closed before the answer")`. The transport never sends a
/// request a second time by itself: the sync engine retries with the same batch id
/// and the server dedupes (SY-4, SY-5).
///
/// Not used on Apple platforms, where `URLSessionTransport` stays the transport and an
/// app never links NIO. Call `shutdown()` before dropping the last reference.
public final class AsyncHTTPClientTransport: HTTPTransport, Sendable {
    /// Largest response body read (ingest and token answers are a few hundred bytes).
    static let maxResponseBytes = 4 << 20

    private let client: HTTPClient

    /// Creates a transport trusting the system's CA store plus the certificates in the
    /// PEM files `trustedCertificatePaths` (each may hold several). Throws a one-line
    /// `invalidConfiguration` naming the file that cannot be read or parsed.
    public init(trustedCertificatePaths: [String] = []) throws(BeekonError) {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !trustedCertificatePaths.isEmpty {
            tls.additionalTrustRoots = [.certificates(try Self.certificates(trustedCertificatePaths))]
        }
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        configuration.redirectConfiguration = .disallow
        configuration.httpVersion = .automatic
        configuration.decompression = .disabled
        var pool = HTTPClient.Configuration.ConnectionPool(idleTimeout: .seconds(55), concurrentHTTP1ConnectionsPerHostSoftLimit: 4)
        // A refused connection or a failed handshake is reported at once; the sync engine
        // decides when to try again (its backoff), not the pool.
        pool.retryConnectionEstablishment = false
        configuration.connectionPool = pool
        // The request's own deadline bounds the connect too.
        configuration.timeout = .init(connect: .seconds(120), read: nil)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    deinit {
        // Idempotent: closes the pool if `shutdown()` was not awaited (AsyncHTTPClient traps
        // in debug builds on a client released while running).
        client.shutdown { _ in }
    }

    /// Closes every pooled connection; later requests fail with a network error.
    public func shutdown() async {
        try? await client.shutdown().get()
    }

    /// Reads the PEM files; throws naming the first that cannot be used.
    static func certificates(_ paths: [String]) throws(BeekonError) -> [NIOSSLCertificate] {
        var all: [NIOSSLCertificate] = []
        for path in paths {
            do {
                let found = try NIOSSLCertificate.fromPEMFile(path)
                guard !found.isEmpty else { throw BeekonError.invalidConfiguration("no certificate in it") }
                all += found
            } catch {
                let why = FileManager.default.isReadableFile(atPath: path) ? "not a PEM certificate file" : "cannot read the file"
                throw .invalidConfiguration("sync.trustedCertificates: \(path): \(why)")
            }
        }
        return all
    }

    /// Performs one exchange; the whole of it (connect, TLS, request, answer and its body)
    /// must finish within `request.timeout`, or it is cancelled and reported as `.timeout`.
    public func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        let deadline =
            NIODeadline.now()
            + .nanoseconds(
                Int64(request.timeout.components.seconds) * 1_000_000_000
                    + request.timeout.components.attoseconds / 1_000_000_000)
        let client = self.client
        let work = Task { try await Self.exchange(client, request, deadline: deadline) }
        // A hard deadline for the body as well (AsyncHTTPClient's covers the head only).
        let timer = client.eventLoopGroup.any().scheduleTask(deadline: deadline) { work.cancel() }
        defer { timer.cancel() }
        let result = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            work.cancel()
        }
        switch result {
        case .success(let response): return response
        case .failure(let error):
            throw Self.classify(error, host: request.url.host ?? "?", pastDeadline: NIODeadline.now() >= deadline)
        }
    }

    private static func exchange(_ client: HTTPClient, _ request: HTTPRequest, deadline: NIODeadline) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers where name.lowercased() != "content-length" {
            outgoing.headers.add(name: name, value: value)
        }
        if !request.body.isEmpty || request.method != "GET" {
            outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        }
        let response = try await client.execute(outgoing, deadline: deadline)
        let body = try await response.body.collect(upTo: maxResponseBytes)
        var headers: [String: String] = [:]
        for field in response.headers where headers[field.name.lowercased()] == nil {
            headers[field.name.lowercased()] = field.value
        }
        return HTTPResponse(status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
    }
}
