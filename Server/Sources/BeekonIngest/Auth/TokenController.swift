import BeekonWire
import Foundation
import Hummingbird
import Logging

/// `POST /oauth/token` (BeekonWire's ``WireTokenRequest`` in, ``WireTokenGrant`` out) with `grant_type=refresh_token` and `refresh_token=…`, or
/// `grant_type=enrollment_code` with `code=…` and `install_id=…` (a device enrolling with a
/// code an admin created, issue 28), as a form (`application/x-www-form-urlencoded`, the SDK's
/// default) or JSON.
/// Errors follow RFC 6749 §5.2 (`400 {"error": "invalid_grant"}` etc.), which
/// the SDK treats as dead credentials; database failures answer 503 and a fleet code past its
/// hourly allowance 429 `slow_down`, both with `Retry-After` (transient).
struct TokenController: Sendable {
    let tokens: TokenService
    let metrics: IngestMetrics

    func register(on router: Router<IngestRequestContext>) {
        router.post("/oauth/token") { request, context in
            await self.handle(request, logger: context.logger)
        }
    }

    func handle(_ request: Request, logger: Logger) async -> Response {
        var request = request
        guard let buffer = try? await request.collectBody(upTo: 64 * 1024) else {
            return APIResponse.error(.badRequest, "invalid_request", "the body is missing or larger than 64 KiB")
        }
        let exchange: @Sendable () async throws(TokenError) -> TokenGrant
        do throws(WireDecodingError) {
            switch try WireTokenRequest.decode(Data(buffer.readableBytesView), contentType: request.headers[.contentType]) {
            case .refresh(let presented):
                exchange = { () async throws(TokenError) -> TokenGrant in try await tokens.refresh(presented) }
            case .enrollment(let code, let install):
                exchange = { () async throws(TokenError) -> TokenGrant in try await tokens.enroll(code: code, installId: install) }
            }
        } catch {
            guard case .invalid(let path, let reason) = error else {
                return APIResponse.error(.badRequest, "invalid_request", error.description)
            }
            return APIResponse.error(.badRequest, path == "grant_type" ? "unsupported_grant_type" : "invalid_request", reason)
        }
        do {
            let grant = try await exchange()
            metrics.tokenRefreshOK.increment()
            var headers = HTTPFields()
            headers[.cacheControl] = "no-store"
            return APIResponse.json(.ok, [UInt8](grant.encoded()), headers: headers)
        } catch {
            switch error {
            case .invalidGrant(let why):
                metrics.tokenRefreshRejected.increment()
                logger.notice("refresh token rejected", metadata: ["reason": "\(why)"])
                return APIResponse.error(.badRequest, "invalid_grant", why)
            case .slowDown(let seconds):
                // Transient, not dead (issue 52): a fleet code's junk enrolments hold a real
                // install off for at most an hour.
                metrics.tokenRefreshRejected.increment()
                var headers = HTTPFields()
                headers[.retryAfter] = "\(seconds)"
                return APIResponse.error(.tooManyRequests, "slow_down", error.description, headers: headers)
            case .invalidSubject, .notReady, .store:
                logger.error("token refresh failed", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the token could not be issued; retry later")
            }
        }
    }
}
