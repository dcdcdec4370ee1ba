import BeekonWire
import Foundation
import Hummingbird

/// Admin routes for device credentials (issue 28), admin API key only:
///
/// - `POST /v1/enrollments` `{"uses":1,"ttl_seconds":86400,"label":"…"}` (all optional) → 201
///   `{"code","uses","expires_at","label"}`: a code each of `uses` installs may exchange once at
///   `/oauth/token` (`grant_type=enrollment_code`) for tokens bound to its `install_id`.
/// - `POST /v1/devices/{install_id}/revoke` → 200 `{"install_id","revoked_credentials"}`: every
///   credential bound to the install stops working (access tokens at their next use, refresh
///   tokens at once, command long-polls within a second) and the install cannot enrol again.
struct DeviceAdminController: Sendable {
    let tokens: TokenService
    let auth: Authenticator

    /// Bounds of a new code: at most this many uses and this lifetime.
    static let maxUses = 100_000
    static let maxTTLSeconds = 366 * 86_400

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/enrollments") { request, context in
            guard auth.hasAdminKey(request.headers) else { return adminOnly(request) }
            var request = request
            let body = try? await request.collectBody(upTo: 16_384)
            let spec: Spec
            if let body, body.readableBytes > 0 {
                guard let decoded = try? JSONDecoder().decode(Spec.self, from: Data(buffer: body)) else {
                    return APIResponse.error(.badRequest, "invalid_request", "send {\"uses\":1,\"ttl_seconds\":86400,\"label\":\"…\"}")
                }
                spec = decoded
            } else {
                spec = Spec()
            }
            let uses = spec.uses ?? 1
            let ttl = spec.ttlSeconds ?? 86_400
            guard (1...Self.maxUses).contains(uses) else { return ReadController.badParameter("uses", "1…\(Self.maxUses)") }
            guard (60...Self.maxTTLSeconds).contains(ttl) else {
                return ReadController.badParameter("ttl_seconds", "60…\(Self.maxTTLSeconds)")
            }
            if let label = spec.label, label.utf8.count > 200 { return ReadController.badParameter("label", "at most 200 bytes") }
            if let label = spec.label, WireLimits.textProblem(label) != nil {
                return ReadController.badParameter("label", "text without U+0000")
            }
            do {
                let code = try await tokens.createEnrollmentCode(uses: uses, ttlSeconds: ttl, label: spec.label)
                var headers = HTTPFields()
                headers[.cacheControl] = "no-store"
                return APIResponse.encode(.created, code, headers: headers)
            } catch {
                context.logger.error("enrollment code not created", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the code could not be stored; retry later")
            }
        }
        router.post("/v1/devices/:install/revoke") { request, context in
            guard auth.hasAdminKey(request.headers) else { return adminOnly(request) }
            guard let install = ReadController.uuid(context.parameters.get("install")) else { return ReadController.badID("install_id") }
            do {
                let count = try await tokens.revoke(installId: install)
                return APIResponse.encode(.ok, Revoked(installId: install.wireString, revokedCredentials: count))
            } catch {
                context.logger.error("device not revoked", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the device could not be revoked; retry later")
            }
        }
    }

    /// 401 without a valid credential, 403 with one that is not an admin key.
    func adminOnly(_ request: Request) -> Response {
        auth.principal(of: request.headers) == nil
            ? APIResponse.unauthorized("this needs an admin API key: Authorization: Bearer <key>")
            : APIResponse.error(.forbidden, "forbidden", "this needs an admin API key")
    }

    struct Spec: Decodable {
        var uses: Int?
        var ttlSeconds: Int?
        var label: String?

        enum CodingKeys: String, CodingKey {
            case uses, label
            case ttlSeconds = "ttl_seconds"
        }

        init() {}

        /// Each field is optional, but present means typed: an explicit `null` is refused like
        /// any other mistyped value (schemathesis found `"label": null` accepted).
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.uses) { uses = try c.decode(Int.self, forKey: .uses) }
            if c.contains(.ttlSeconds) { ttlSeconds = try c.decode(Int.self, forKey: .ttlSeconds) }
            if c.contains(.label) { label = try c.decode(String.self, forKey: .label) }
        }
    }

    struct Revoked: Encodable {
        var installId: String
        var revokedCredentials: Int

        enum CodingKeys: String, CodingKey {
            case installId = "install_id"
            case revokedCredentials = "revoked_credentials"
        }
    }
}
