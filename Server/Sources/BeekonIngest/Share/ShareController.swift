import BeekonWire
import Foundation
import Hummingbird

/// The admin-only share API (an API key is required; with auth off it is open like the rest):
/// `POST /v1/shares`, `GET /v1/shares`, `DELETE /v1/shares/{id}`, `GET /v1/shares/access`.
struct ShareController: Sendable {
    let shares: ShareService
    let store: any LocationStore
    let auth: Authenticator
    let publicURL: String?

    /// The body of `POST /v1/shares`: who and how long, and the `ShareScope` keys beside them.
    struct CreateRequest: Decodable {
        var devices: [String]?
        var all: Bool?
        var expiresInSeconds: Int?
        var label: String?
        var scope: ShareScope

        enum CodingKeys: String, CodingKey {
            case devices, all, label
            case expiresInSeconds = "expires_in_seconds"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            devices = try c.decodeIfPresent([String].self, forKey: .devices)
            all = try c.decodeIfPresent(Bool.self, forKey: .all)
            expiresInSeconds = try c.decodeIfPresent(Int.self, forKey: .expiresInSeconds)
            label = try c.decodeIfPresent(String.self, forKey: .label)
            scope = try ShareScope(from: decoder)
        }

        /// The request's top-level keys (compared with the OpenAPI contract by a test).
        static var keys: [String] { ["devices", "all", "expires_in_seconds", "label"] + ShareScope.keys }

        /// The one-line reason a body does not decode, naming the key when there is one.
        static func reason(_ error: any Error) -> String {
            let path: [any CodingKey]
            switch error as? DecodingError {
            case .typeMismatch(_, let c)?, .valueNotFound(_, let c)?, .keyNotFound(_, let c)?, .dataCorrupted(let c)?: path = c.codingPath
            default: path = []
            }
            guard let key = path.first?.stringValue else { return "send a JSON object: {\"devices\":[…] or \"all\":true, …}" }
            return "\(key): wrong type (see the ShareRequest schema in the OpenAPI contract)"
        }
    }

    /// The answer to a create: the share, its token (shown once) and a stream URL.
    struct Created: Encodable {
        var share: Share
        var token: String
        var url: String
    }

    /// Registers the routes in one admin-only group (``AdminMiddleware``: 401 without a valid
    /// credential, 403 with another, each saying the share API needs an admin API key).
    func register(on router: Router<IngestRequestContext>) {
        let refusal = "the share API needs an admin API key"
        let admin = router.group().add(middleware: AdminMiddleware(auth: auth, unauthorized: refusal, forbidden: refusal))
        admin.post("/v1/shares") { request, context in
            try await self.answering(context) { try await self.create(request) }
        }
        admin.get("/v1/shares") { request, context in
            try await self.answering(context) {
                guard let limit = ReadController.listLimit(request.uri.queryParameters) else {
                    return ReadController.badParameter("limit", "1...\(ReadController.maxList)")
                }
                let all = try await self.shares.store.shares()
                return APIResponse.encode(.ok, ShareList(shares: Array(all.prefix(limit)), truncated: all.count > limit ? true : nil))
            }
        }
        admin.delete("/v1/shares/:id") { request, context in
            try await self.answering(context) {
                let id = context.parameters.get("id") ?? ""
                guard try await self.shares.revoke(id: id) else {
                    return APIResponse.error(.notFound, "not_found", "no active share with id \(id)")
                }
                return APIResponse.encode(.ok, ["revoked": id])
            }
        }
        admin.get("/v1/shares/access") { request, context in
            try await self.answering(context) {
                let id = request.uri.queryParameters["share_id"].map(String.init)
                guard let limit = ReadController.listLimit(request.uri.queryParameters) else {
                    return ReadController.badParameter("limit", "1...\(ReadController.maxList)")
                }
                let rows = try await self.shares.store.shareAccess(shareId: id, limit: limit + 1)
                return APIResponse.encode(.ok, AccessList(access: Array(rows.prefix(limit)), truncated: rows.count > limit ? true : nil))
            }
        }
    }

    /// Runs a route of the admin group; store failures become 503.
    private func answering(_ context: IngestRequestContext, _ body: () async throws -> Response) async throws(APIError) -> Response {
        _ = try context.requirePrincipal()
        do {
            return try await body()
        } catch {
            return APIResponse.unavailable("the share store could not be reached; retry later")
        }
    }

    private func create(_ request: Request) async throws -> Response {
        var bytes: [UInt8] = []
        for try await chunk in request.body {
            guard bytes.count + chunk.readableBytes <= 65_536 else {
                return APIResponse.error(.contentTooLarge, "too_large", "share requests are small")
            }
            bytes.append(contentsOf: chunk.readableBytesView)
        }
        let body: CreateRequest
        do {
            body = try JSONDecoder().decode(CreateRequest.self, from: Data(bytes))
        } catch {
            return APIResponse.error(.badRequest, "invalid_request", CreateRequest.reason(error))
        }
        let spec: ShareSpec
        do {
            spec = try ShareSpec(
                devices: body.devices, all: body.all ?? false, expiresInSeconds: body.expiresInSeconds, label: body.label,
                scope: body.scope)
        } catch {
            return APIResponse.error(.badRequest, "invalid_request", error.description)
        }
        let (share, token) = try await shares.create(spec)
        let base = publicURL ?? request.head.authority.map { "http://\($0)" } ?? ""
        return APIResponse.encode(.created, Created(share: share, token: token, url: "\(base)/v1/live?share=\(token)"))
    }
}

/// `GET /v1/shares`: at most `limit` shares, newest first; `truncated` when more exist.
struct ShareList: Encodable {
    var shares: [Share]
    var truncated: Bool?
}

/// `GET /v1/shares/access`: at most `limit` records, newest first; `truncated` when more exist.
struct AccessList: Encodable {
    var access: [ShareAccess]
    var truncated: Bool?
}
