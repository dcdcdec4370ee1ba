import AsyncHTTPClient
import BeekonWire
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// What a push provider said about one push.
enum PushOutcome: Sendable, Equatable {
    /// Accepted for delivery.
    case sent
    /// Worth another try after a back-off (at least `after` when the provider named one).
    case retry(reason: String, after: Duration?)
    /// The provider says the token is no longer valid: drop it.
    case tokenInvalid(reason: String)
    /// This push failed; neither the token nor the sender is at fault for the next one.
    case failed(reason: String)
    /// The sender is disabled (bad key or account): nothing is sent until it is reconfigured.
    case disabled(reason: String)
}

/// What one push carries: the two kinds the server sends through the same senders.
enum PushMessage: Sendable, Equatable {
    /// The silent push that wakes a device for locate request `id` (useless after `expiresAtMillis`).
    case locate(id: UUID, expiresAtMillis: Int64)
    /// The visible notification for a device that stopped reporting; `id` names it
    /// to the provider (`apns-id`), `expiresAtMillis` is when it is no longer worth delivering.
    case nudge(WireNudgePush, id: UUID, expiresAtMillis: Int64)

    /// The push's id as the provider sees it.
    var id: UUID {
        switch self {
        case .locate(let id, _), .nudge(_, let id, _): return id
        }
    }

    /// When the provider may drop it undelivered (Unix ms).
    var expiresAtMillis: Int64 {
        switch self {
        case .locate(_, let expires), .nudge(_, _, let expires): return expires
        }
    }
}

/// One push provider (APNs or FCM).
protocol PushSender: Sendable {
    /// `apns` or `fcm` (metrics label, log and the request's `push_error`).
    var name: String { get }
    /// Sends `message` to `token`.
    func send(_ message: PushMessage, to token: PushToken) async -> PushOutcome
}

/// The HTTP client both senders share: HTTP/2 where the server offers it in ALPN (APNs
/// requires it), one pooled connection per host multiplexing the streams (AsyncHTTPClient's
/// pool; at most `maxConnections` HTTP/1 connections where a host only speaks HTTP/1.1).
enum PushHTTPClient {
    /// A client that also trusts the PEM roots in `caFile` (tests' local providers).
    static func make(caFile: String?, maxConnections: Int = 4) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile { tls.additionalTrustRoots = [.file(caFile)] }
        var config = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(30)))
        config.httpVersion = .automatic
        config.connectionPool = .init(idleTimeout: .seconds(600), concurrentHTTP1ConnectionsPerHostSoftLimit: maxConnections)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
    }

    /// Sends `body` and collects at most 64 KiB of the answer.
    static func post(
        _ client: HTTPClient, url: String, headers: [(String, String)], body: [UInt8]
    ) async throws -> (status: Int, headers: HTTPHeaders, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (k, v) in headers { request.headers.add(name: k, value: v) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 64 * 1024)
        return (Int(response.status.code), response.headers, [UInt8](buffer: bytes))
    }

    /// The string at `key` of a JSON object body, if any.
    static func field(_ body: [UInt8], _ key: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?[key] as? String
    }
}
