import Hummingbird

/// Answers `405 Method Not Allowed` with an `Allow` header when a request's path is a
/// known route but its method is not (RFC 9110 §15.5.6); unknown paths still get 404.
///
/// Added to the router after every route, so it sits only on the router's not-found
/// path and costs matched requests nothing.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// One route: its path segments (`nil` for a `:parameter`) and methods.
    private struct Route: Sendable {
        var segments: [String?]
        var methods: Set<String>
    }

    private let routes: [Route]

    /// Builds the table from the router's routes (`router.routes`).
    init(routes: [(path: String, method: String)]) {
        var byPath: [String: Route] = [:]
        for route in routes {
            let segments = route.path.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") || $0.hasPrefix("{") ? nil : String($0) }
            byPath[route.path, default: Route(segments: segments, methods: [])].methods.insert(route.method)
        }
        self.routes = Array(byPath.values)
    }

    /// The methods of the route `path` resolves to; empty when no route matches. As in the
    /// router, a literal segment wins over a parameter (`/v1/shares/access` is not
    /// `/v1/shares/:id`): only the matches with the most literal segments count.
    func allowedMethods(for path: String) -> Set<String> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        var allowed = Set<String>()
        var bestLiterals = -1
        for route in routes where route.segments.count == parts.count {
            guard zip(route.segments, parts).allSatisfy({ segment, part in segment.map { $0 == part } ?? !part.isEmpty }) else { continue }
            let literals = route.segments.filter { $0 != nil }.count
            if literals > bestLiterals {
                bestLiterals = literals
                allowed = route.methods
            } else if literals == bestLiterals {
                allowed.formUnion(route.methods)
            }
        }
        return allowed
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let allowed = allowedMethods(for: request.uri.path)
        guard !allowed.isEmpty else { return try await next(request, context) }
        let allow = allowed.sorted().joined(separator: ", ")
        var headers = HTTPFields()
        headers[.allow] = allow
        return APIResponse.error(
            .methodNotAllowed, "method_not_allowed",
            "\(request.method.rawValue) is not supported on \(request.uri.path); use \(allow)", headers: headers)
    }
}
