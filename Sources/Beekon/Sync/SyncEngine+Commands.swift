import Foundation

extension SyncEngine {
    /// A device request to the ingest server beside uploads (the locate command channel and
    /// refusals): same origin as `config.url`, the sync headers, and the same credential
    /// (refreshed once on a 401). Nil when it could not be sent.
    func deviceRequest(path: String, method: String, body: Data, timeout: Duration) async -> HTTPResponse? {
        guard var components = URLComponents(url: config.url, resolvingAgainstBaseURL: false) else { return nil }
        let parts = path.split(separator: "?", maxSplits: 1)
        components.path = String(parts[0])
        components.percentEncodedQuery = parts.count > 1 ? String(parts[1]) : nil
        guard let url = components.url else { return nil }
        var authorization: String?
        if let auth {
            guard case .proceed(let value) = await auth.authorization() else { return nil }
            authorization = value
        }
        func send(_ authorization: String?) async -> HTTPResponse? {
            var headers = config.headers.filter { $0.key.lowercased() != "content-encoding" }
            if let authorization {
                headers = headers.filter { $0.key.lowercased() != "authorization" }
                headers["Authorization"] = authorization
            }
            if !body.isEmpty { headers["Content-Type"] = "application/json" }
            return try? await transport.send(HTTPRequest(url: url, method: method, headers: headers, body: body, timeout: timeout))
        }
        let first = await send(authorization)
        guard first?.status == 401, let auth, case .proceed(let retry) = await auth.unauthorized(rejected: authorization) else {
            return first
        }
        return await send(retry)
    }
}
