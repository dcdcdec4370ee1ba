import Foundation
import Hummingbird
import Logging

/// `POST /oauth/token` with `grant_type=refresh_token` and `refresh_token=…`, or
/// `grant_type=enrollment_code` with `code=…` and `install_id=…` (a device enrolling with a
/// code an admin created, issue 28), as a form (`application/x-www-form-urlencoded`, the SDK's
/// default) or JSON.
/// Errors follow RFC 6749 §5.2 (`400 {"error": "invalid_grant"}` etc.), which
/// the SDK treats as dead credentials; database failures answer 503 (transient).
struct TokenController: Sendable {
    let tokens: TokenService
    let metrics: IngestMetrics

    func register(on router: Router<BasicRequestContext>) {
        router.post("/oauth/token") { request, context in
            await self.handle(request, logger: context.logger)
        }
    }

    func handle(_ request: Request, logger: Logger) async -> Response {
        var request = request
        guard let buffer = try? await request.collectBody(upTo: 64 * 1024) else {
            return APIResponse.error(.badRequest, "invalid_request", "the body is missing or larger than 64 KiB")
        }
        let fields = Self.parseFields(Array(buffer.readableBytesView), contentType: request.headers[.contentType])
        let exchange: @Sendable () async throws(TokenError) -> TokenGrant
        switch fields["grant_type"] {
        case "refresh_token":
            guard let presented = fields["refresh_token"], !presented.isEmpty else {
                return APIResponse.error(.badRequest, "invalid_request", "refresh_token is missing")
            }
            exchange = { () async throws(TokenError) -> TokenGrant in try await tokens.refresh(presented) }
        case "enrollment_code":
            guard let code = fields["code"], !code.isEmpty, let install = fields["install_id"].flatMap(UUID.init(uuidString:)) else {
                return APIResponse.error(.badRequest, "invalid_request", "send code and install_id (a UUID)")
            }
            exchange = { () async throws(TokenError) -> TokenGrant in try await tokens.enroll(code: code, installId: install) }
        default:
            return APIResponse.error(
                .badRequest, "unsupported_grant_type", "grant_type must be refresh_token or enrollment_code")
        }
        do {
            let grant = try await exchange()
            metrics.tokenRefreshOK.increment()
            var headers = HTTPFields()
            headers[.cacheControl] = "no-store"
            return APIResponse.encode(.ok, grant, headers: headers)
        } catch {
            switch error {
            case .invalidGrant(let why):
                metrics.tokenRefreshRejected.increment()
                logger.notice("refresh token rejected", metadata: ["reason": "\(why)"])
                return APIResponse.error(.badRequest, "invalid_grant", why)
            case .invalidSubject, .notReady, .store:
                logger.error("token refresh failed", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the token could not be issued; retry later")
            }
        }
    }

    /// Reads a JSON object (string values; numbers are stringified) or a URL-encoded form.
    static func parseFields(_ body: [UInt8], contentType: String?) -> [String: String] {
        let looksJSON = contentType?.lowercased().contains("json") == true || body.first(where: { $0 > 0x20 }) == UInt8(ascii: "{")
        if looksJSON {
            guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return [:] }
            var out: [String: String] = [:]
            for (key, value) in object {
                if let s = value as? String { out[key] = s } else if let n = value as? NSNumber { out[key] = n.stringValue }
            }
            return out
        }
        let text = String(decoding: body, as: UTF8.self)
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(s)
            }
            out[decode(kv[0])] = kv.count > 1 ? decode(kv[1]) : ""
        }
        return out
    }
}
