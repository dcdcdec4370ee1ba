import Foundation
import Hummingbird

/// The request context of every route: Hummingbird's core storage, and the credential the
/// route group's middleware checked. A group's middleware (``ViewerMiddleware``,
/// ``AdminMiddleware``, ``DeviceMiddleware``, ``CircleMiddleware``) refuses a request with its
/// 401 / 403 before the handler runs, or sets what it checked; the handler reads it with
/// ``requireViewer()``, ``requirePrincipal()``, ``requireDevice()`` or
/// ``requireCircleCaller()``, which throw (500) when no middleware checked it, so that a route
/// added to the wrong group fails loudly instead of serving without a check.
package struct IngestRequestContext: RequestContext {
    /// Hummingbird's per-request storage (logger, path parameters, …).
    package var coreContext: CoreRequestContextStorage
    /// The reader's grant, set by ``ViewerMiddleware``.
    var viewer: ViewerGrant?
    /// Who made the request, set by ``AdminMiddleware`` and ``DeviceMiddleware``.
    var principal: Principal?
    /// The device the path names (`install_id`), checked against the credential by
    /// ``DeviceMiddleware`` or a ``ViewerMiddleware`` with `device`.
    var device: UUID?
    /// The caller of a circle route, set by ``CircleMiddleware``.
    var circleCaller: CircleCaller?

    /// A context for a request from `source`, with no credential checked yet.
    package init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// The grant ``ViewerMiddleware`` set; throws 500 when the route's group has none.
    func requireViewer() throws(APIError) -> ViewerGrant {
        guard let viewer else { throw .unchecked("reader") }
        return viewer
    }

    /// The principal ``AdminMiddleware`` or ``DeviceMiddleware`` set; throws 500 when the
    /// route's group has none.
    func requirePrincipal() throws(APIError) -> Principal {
        guard let principal else { throw .unchecked("credential") }
        return principal
    }

    /// The caller ``CircleMiddleware`` found; throws 500 when the route's group has none.
    func requireCircleCaller() throws(APIError) -> CircleCaller {
        guard let circleCaller else { throw .unchecked("circle caller") }
        return circleCaller
    }

    /// The path's device, checked against the credential; throws 500 when the route's group has
    /// no such check.
    func requireDevice() throws(APIError) -> UUID {
        guard let device else { throw .unchecked("device") }
        return device
    }
}

/// Checks a reader's credential for a group of read routes (``ViewerAccess/grant(for:what:)``:
/// admin key, share or auth off; device tokens get 403) and puts the grant in the context.
/// With `device` (the locate and history routes), the path's device id is read first (400 when
/// it is no UUID) and the grant must see that device (404 as for a device not shared).
struct ViewerMiddleware: RouterMiddleware {
    /// The reader checks.
    let access: ViewerAccess
    /// The endpoint's name, recorded with a share's access (`devices`, `fixes`, …).
    let what: String
    /// The path parameter naming the device the route is about, if it is checked here.
    var device: String? = nil

    func handle(
        _ request: Request, context: IngestRequestContext, next: (Request, IngestRequestContext) async throws -> Response
    ) async throws -> Response {
        var install: UUID?
        if let device { install = try context.parameters.require(device, as: UUID.self) }
        switch await access.grant(for: request, what: what) {
        case .refused(let response): return response
        case .granted(let grant):
            if let install, !grant.scope.sees(install) { return ReadController.notShared() }
            var context = context
            context.viewer = grant
            context.device = install
            return try await next(request, context)
        }
    }
}

/// Checks a device's own credential for the path's device (`install_id`): any credential that
/// may upload (admin key, access token, auth off), an access token only for the install it is
/// bound to (``Authenticator/refusal(_:actingFor:)``: 403 for another, 401 once revoked). The
/// id is read first (400 when it is no UUID), then the credential (401 without one); puts the
/// principal and the device in the context.
struct DeviceMiddleware: RouterMiddleware {
    /// The credential checks.
    let auth: Authenticator

    func handle(
        _ request: Request, context: IngestRequestContext, next: (Request, IngestRequestContext) async throws -> Response
    ) async throws -> Response {
        let install = try context.parameters.require("install_id", as: UUID.self)
        guard let principal = auth.principal(of: request.headers) else {
            return APIResponse.unauthorized("send the device's API key or access token: Authorization: Bearer <token>")
        }
        if let refusal = await auth.refusal(principal, actingFor: install) { return refusal }
        var context = context
        context.principal = principal
        context.device = install
        return try await next(request, context)
    }
}

/// Admits an admin API key (or any request with auth off) to a group of admin routes, and with
/// `enroller` also an enroller key; puts the principal in the context. 401 (with a
/// `WWW-Authenticate` challenge) without a valid credential, 403 with another one.
struct AdminMiddleware: RouterMiddleware {
    /// The credential checks.
    let auth: Authenticator
    /// Whether an enroller key is admitted too (`POST /v1/enrollments`).
    var enroller = false
    /// The 401's message.
    var unauthorized = "this needs an admin API key: Authorization: Bearer <key>"
    /// The 403's message.
    var forbidden = "this needs an admin API key"

    func handle(
        _ request: Request, context: IngestRequestContext, next: (Request, IngestRequestContext) async throws -> Response
    ) async throws -> Response {
        let principal = auth.principal(of: request.headers)
        switch principal {
        case .apiKey?, .anonymous?: break
        case .enroller? where enroller: break
        case nil: return APIResponse.unauthorized(unauthorized)
        case .device?, .enroller?: return APIResponse.error(.forbidden, "forbidden", forbidden)
        }
        var context = context
        context.principal = principal
        return try await next(request, context)
    }
}
