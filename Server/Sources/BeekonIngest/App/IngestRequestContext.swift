import Hummingbird

/// The request context of every route: Hummingbird's core storage, and the credential the
/// route group's middleware checked. A group's middleware (``ViewerMiddleware``,
/// ``AdminMiddleware``) refuses a request with its 401 / 403 before the handler runs, or sets
/// ``viewer`` or ``principal``; the handler reads it with ``requireViewer()`` or
/// ``requirePrincipal()``, which throw (500) when no middleware checked it, so that a route
/// added to the wrong group fails loudly instead of serving without a check.
package struct IngestRequestContext: RequestContext {
    /// Hummingbird's per-request storage (logger, path parameters, …).
    package var coreContext: CoreRequestContextStorage
    /// The reader's grant, set by ``ViewerMiddleware``.
    var viewer: ViewerGrant?
    /// Who made the request, set by ``AdminMiddleware``.
    var principal: Principal?

    /// A context for a request from `source`, with no credential checked yet.
    package init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// The grant ``ViewerMiddleware`` set; throws 500 when the route's group has none.
    func requireViewer() throws(APIError) -> ViewerGrant {
        guard let viewer else { throw .unchecked("reader") }
        return viewer
    }

    /// The principal ``AdminMiddleware`` set; throws 500 when the route's group has none.
    func requirePrincipal() throws(APIError) -> Principal {
        guard let principal else { throw .unchecked("credential") }
        return principal
    }
}

/// Checks a reader's credential for a group of read routes (``ViewerAccess/grant(for:what:)``:
/// admin key, share or auth off; device tokens get 403) and puts the grant in the context.
struct ViewerMiddleware: RouterMiddleware {
    /// The reader checks.
    let access: ViewerAccess
    /// The endpoint's name, recorded with a share's access (`devices`, `fixes`, …).
    let what: String

    func handle(
        _ request: Request, context: IngestRequestContext, next: (Request, IngestRequestContext) async throws -> Response
    ) async throws -> Response {
        switch await access.grant(for: request, what: what) {
        case .refused(let response): return response
        case .granted(let grant):
            var context = context
            context.viewer = grant
            return try await next(request, context)
        }
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
