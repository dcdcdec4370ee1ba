import Foundation
import Hummingbird

/// A refusal thrown by a handler or middleware, rendered as the server's JSON error envelope
/// (`{"error": code, "message": text}`, ``APIResponse/error(_:_:_:headers:)``) with its status.
/// The one error type routes throw to the router, which turns it into its response outside
/// every middleware. A credential refusal is therefore returned (by the group's middleware,
/// ``IngestRequestContext``), not thrown, so that ``AuthFailureMiddleware`` sees and counts its 401.
struct APIError: HTTPResponseError, Sendable {
    /// The response status.
    let status: HTTPResponse.Status
    /// The `error` field: a stable code (`invalid_request`, `not_found`, …).
    let code: String
    /// The `message` field, for people.
    let message: String
    /// Headers sent with it (`WWW-Authenticate`, `Retry-After`).
    var headers: HTTPFields = [:]

    /// The envelope, as ``APIResponse/error(_:_:_:headers:)`` builds it.
    var response: Response { APIResponse.error(status, code, message, headers: headers) }

    /// ``response``, for Hummingbird's router.
    func response(from request: Request, context: some RequestContext) throws -> Response { response }

    /// 400 `invalid_request`: "`name` must be `expected`" (a bad parameter or path segment).
    static func badParameter(_ name: String, _ expected: String) -> APIError {
        APIError(status: .badRequest, code: "invalid_request", message: "\(name) must be \(expected)")
    }

    /// 500 for a route that reads a credential its group did not check: a wiring mistake of the
    /// server, never the client's (see ``IngestRequestContext``).
    static func unchecked(_ what: String) -> APIError {
        APIError(status: .internalServerError, code: "internal", message: "this route has no \(what) check")
    }
}

extension Parameters {
    /// The path parameter `name` as a UUID: the canonical 36 characters, else a thrown 400
    /// `invalid_request` "`name` must be a UUID" (``APIError``). Shadows Hummingbird's
    /// `require(_:as:)` for UUIDs, whose `HTTPError` neither names the parameter nor uses the
    /// server's envelope; route parameters are named as in `openapi.json` (`:install_id`).
    func require(_ name: String, as type: UUID.Type) throws(APIError) -> UUID {
        guard let id = ReadController.uuid(self.get(name)) else { throw .badParameter(name, "a UUID") }
        return id
    }
}
