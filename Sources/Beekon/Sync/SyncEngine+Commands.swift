import Foundation

extension SyncEngine {
    /// What one device request came to.
    enum DeviceExchange: Sendable {
        /// The server answered (after one refresh on a 401).
        case answered(HTTPResponse)
        /// No usable credential: `dead` when the server refused it for good, else not yet (a
        /// transient refresh failure, a locked vault).
        case noCredential(dead: Bool)
        /// The request reached no server (or the URL could not be built: nil).
        case failed(HTTPTransportError?)
    }

    /// A device request to the ingest server beside uploads (the locate command channel and
    /// refusals): same origin as `config.url`, the sync headers, and the same credential
    /// (refreshed once on a 401). Nil when it could not be sent.
    func deviceRequest(path: String, method: String, body: Data, timeout: Duration) async -> HTTPResponse? {
        guard case .answered(let response) = await deviceExchange(path: path, method: method, body: body, timeout: timeout) else {
            return nil
        }
        return response
    }

    /// ``deviceRequest(path:method:body:timeout:)`` saying why it got no answer.
    func deviceExchange(path: String, method: String, body: Data, timeout: Duration) async -> DeviceExchange {
        guard let url = deviceURL(path: path) else { return .failed(nil) }
        var authorization: String?
        if let auth {
            switch await auth.authorization() {
            case .proceed(let value): authorization = value
            case .dead: return .noCredential(dead: true)
            case .wait: return .noCredential(dead: false)
            }
        }
        func send(_ authorization: String?) async -> DeviceExchange {
            var headers = deviceHeaders(authorization: authorization)
            if !body.isEmpty { headers["Content-Type"] = "application/json" }
            do {
                return .answered(
                    try await transport.send(HTTPRequest(url: url, method: method, headers: headers, body: body, timeout: timeout)))
            } catch {
                return .failed(error)
            }
        }
        let first = await send(authorization)
        guard case .answered(let response) = first, response.status == 401, let auth else { return first }
        guard case .proceed(let retry) = await auth.unauthorized(rejected: authorization) else { return first }
        return await send(retry)
    }

    /// `path` (percent-encoded, with an optional `?query`) on the origin of `config.url`.
    nonisolated func deviceURL(path: String) -> URL? {
        guard var components = URLComponents(url: config.url, resolvingAgainstBaseURL: false) else { return nil }
        let parts = path.split(separator: "?", maxSplits: 1)
        components.percentEncodedPath = String(parts[0])
        components.percentEncodedQuery = parts.count > 1 ? String(parts[1]) : nil
        return components.url
    }

    /// The sync headers without `Content-Encoding`, with `authorization` in place of the configured one.
    nonisolated func deviceHeaders(authorization: String?) -> [String: String] {
        var headers = config.headers.filter { $0.key.lowercased() != "content-encoding" }
        if let authorization {
            headers = headers.filter { $0.key.lowercased() != "authorization" }
            headers["Authorization"] = authorization
        }
        return headers
    }
}
