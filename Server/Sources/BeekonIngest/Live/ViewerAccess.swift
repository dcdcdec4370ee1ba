import Foundation
import Hummingbird

/// A viewer's right to read: its scope, and whether it still holds (a share can be
/// revoked or expire while its stream is open).
struct ViewerGrant: Sendable {
    /// What the viewer may see.
    var scope: ViewerScope
    /// The share behind the grant; nil for an admin key or auth off.
    var shareId: String?
    /// Checked by open streams on every wake-up and heartbeat.
    var validity: @Sendable () async -> Bool = { true }

    /// Whether the grant still holds.
    func stillValid() async -> Bool { await validity() }
}

/// The outcome of checking a reader's credential.
enum AccessDecision: Sendable {
    /// Allowed, with this scope.
    case granted(ViewerGrant)
    /// Refused, with the answer to send (401 or 403).
    case refused(Response)
}

/// Decides who may read: admin API keys (and auth off) see everything, shares see their
/// scope, device tokens are refused (403) — they may only upload.
struct ViewerAccess: Sendable {
    let auth: Authenticator
    let shares: ShareService?

    /// The grant for a read of `what` (an endpoint name, recorded for shares).
    func grant(for request: Request, what: String) async -> AccessDecision {
        // A share token keeps its scope even with auth off (a coarsened share stays coarse).
        let token = Authenticator.bearer(request.headers) ?? request.uri.queryParameters["share"].map(String.init)
        if let shares, let token, token.hasPrefix(ShareService.tokenPrefix) {
            switch await shares.authorize(token: token, what: what, path: request.uri.path) {
            case .granted(let grant): return .granted(grant)
            case .expired: return .refused(APIResponse.error(.forbidden, "share_expired", "this share has expired"))
            case .revoked: return .refused(APIResponse.error(.forbidden, "share_revoked", "this share was revoked"))
            case .unavailable: return .refused(APIResponse.unavailable("the share could not be checked; retry later"))
            case .unknown: return .refused(APIResponse.unauthorized("unknown share token"))
            }
        }
        switch auth.principal(of: request.headers) {
        case .apiKey?, .anonymous?:
            return .granted(ViewerGrant(scope: .everything))
        case .device?:
            return .refused(
                APIResponse.error(.forbidden, "forbidden", "access tokens may only upload; use an API key or a share token to read"))
        case .enroller?:
            return .refused(Authenticator.enrollerOnly())
        case nil:
            return .refused(APIResponse.unauthorized("reading needs an API key or a share token: Authorization: Bearer <token>"))
        }
    }
}
