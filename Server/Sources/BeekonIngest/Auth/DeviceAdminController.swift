import BeekonWire
import Foundation
import Hummingbird

/// Routes for device credentials (issues 28 and 52):
///
/// - `POST /v1/enrollments` (admin key, or an enroller key) `{"uses":1,"ttl_seconds":86400,
///   "label":"…","person":"…","per_hour":…}` (all optional for an admin) → 201
///   `{"code","id","uses","per_hour","person","expires_at","label"}`: a code each of `uses`
///   installs may exchange once at `/oauth/token` (`grant_type=enrollment_code`) for tokens
///   bound to its `install_id`; with `per_hour` a fleet code (any number of installs, at most
///   that many an hour); with `person` every install it enrols is that person's, and may
///   re-enrol with another code of theirs. An enroller key must name a `person` and may set
///   nothing but `ttl_seconds` and `label` (a one-use code).
/// - `GET /v1/enrollments?limit=` (admin) → the codes, newest first, never the codes themselves.
/// - `DELETE /v1/enrollments/{id}` (admin) → 200 `{"revoked":"enr_…"}`; 404 when no active code has that id.
/// - `POST /v1/devices/{install_id}/revoke` (admin) → 200 `{"install_id","revoked_credentials"}`:
///   every credential bound to the install stops working (access tokens at their next use,
///   refresh tokens at once, command long-polls within a second) and the install cannot enrol again.
struct DeviceAdminController: Sendable {
    let tokens: TokenService
    let auth: Authenticator

    /// Bounds of a new code: at most this many uses (or uses an hour) and this lifetime.
    static let maxUses = 100_000
    static let maxTTLSeconds = 366 * 86_400

    /// Registers the routes: `POST /v1/enrollments` in a group whose ``AdminMiddleware`` admits
    /// admin and enroller keys, the others in an admin-only group (401 without a valid
    /// credential, 403 with another); each handler reads the principal from the context.
    func register(on router: Router<IngestRequestContext>) {
        router.group().add(middleware: AdminMiddleware(auth: auth, enroller: true)).post("/v1/enrollments") { request, context in
            let enroller = try context.requirePrincipal() == .enroller
            var request = request
            let body = try? await request.collectBody(upTo: 16_384)
            let spec: Spec
            if let body, body.readableBytes > 0 {
                guard let decoded = try? JSONDecoder().decode(Spec.self, from: Data(buffer: body)) else {
                    return APIResponse.error(
                        .badRequest, "invalid_request", "send {\"uses\":1,\"ttl_seconds\":86400,\"label\":\"…\",\"person\":\"…\"}")
                }
                spec = decoded
            } else {
                spec = Spec()
            }
            if enroller {
                guard spec.person != nil else {
                    return ReadController.badParameter("person", "given: an enroller key creates codes for a person")
                }
                guard spec.perHour == nil, spec.uses ?? 1 == 1 else {
                    return APIResponse.error(.forbidden, "forbidden", "an enroller key creates one-use codes only")
                }
            }
            if spec.perHour != nil, spec.uses != nil { return ReadController.badParameter("uses", "absent with per_hour (a fleet code)") }
            let uses = spec.uses ?? 1
            let ttl = spec.ttlSeconds ?? 86_400
            guard (1...Self.maxUses).contains(uses) else { return ReadController.badParameter("uses", "1…\(Self.maxUses)") }
            if let perHour = spec.perHour, !(1...Self.maxUses).contains(perHour) {
                return ReadController.badParameter("per_hour", "1…\(Self.maxUses)")
            }
            guard (60...Self.maxTTLSeconds).contains(ttl) else {
                return ReadController.badParameter("ttl_seconds", "60…\(Self.maxTTLSeconds)")
            }
            if let label = spec.label, label.utf8.count > 200 { return ReadController.badParameter("label", "at most 200 bytes") }
            if let label = spec.label, WireLimits.textProblem(label) != nil {
                return ReadController.badParameter("label", "text without U+0000")
            }
            if let person = spec.person, !TokenService.isValidSubject(person) {
                return ReadController.badParameter("person", "1–100 printable ASCII characters without spaces")
            }
            do {
                let code = try await tokens.createEnrollmentCode(
                    uses: uses, ttlSeconds: ttl, label: spec.label, person: spec.person, perHour: spec.perHour,
                    createdBy: enroller ? "enroller" : "admin")
                var headers = HTTPFields()
                headers[.cacheControl] = "no-store"
                return APIResponse.encode(.created, code, headers: headers)
            } catch {
                context.logger.error("enrollment code not created", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the code could not be stored; retry later")
            }
        }
        let admin = router.group().add(middleware: AdminMiddleware(auth: auth))
        admin.get("/v1/enrollments") { request, context in
            _ = try context.requirePrincipal()
            guard let limit = ReadController.listLimit(request.uri.queryParameters) else {
                return ReadController.badParameter("limit", "1...\(ReadController.maxList)")
            }
            do {
                let all = try await tokens.enrollmentCodes(limit: limit + 1)
                return APIResponse.encode(
                    .ok, CodeList(enrollments: all.prefix(limit).map(Listed.init), truncated: all.count > limit ? true : nil))
            } catch {
                context.logger.error("enrollment codes not listed", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the codes could not be read; retry later")
            }
        }
        admin.delete("/v1/enrollments/:id") { request, context in
            _ = try context.requirePrincipal()
            guard let id = context.parameters.get("id"), Self.isCodeID(id) else {
                return ReadController.badParameter("id", "an enrollment code id (enr_ and 24 hex digits)")
            }
            do {
                guard try await tokens.revokeEnrollmentCode(id: id) else {
                    return APIResponse.error(.notFound, "not_found", "no active enrollment code has this id")
                }
                return APIResponse.encode(.ok, ["revoked": id])
            } catch {
                context.logger.error("enrollment code not revoked", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the code could not be revoked; retry later")
            }
        }
        admin.post("/v1/devices/:install_id/revoke") { request, context in
            _ = try context.requirePrincipal()
            let install = try context.parameters.require("install_id", as: UUID.self)
            do {
                let count = try await tokens.revoke(installId: install)
                return APIResponse.encode(.ok, Revoked(installId: install.wireString, revokedCredentials: count))
            } catch {
                context.logger.error("device not revoked", metadata: ["error": "\(error)"])
                return APIResponse.unavailable("the device could not be revoked; retry later")
            }
        }
    }

    /// Whether `id` has the shape of ``EnrollmentCodeRecord/id``.
    static func isCodeID(_ id: String) -> Bool {
        let hex = id.utf8.dropFirst(4)
        return id.hasPrefix("enr_") && hex.count == 24
            && hex.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }

    struct Spec: Decodable {
        var uses: Int?
        var ttlSeconds: Int?
        var label: String?
        var person: String?
        var perHour: Int?

        enum CodingKeys: String, CodingKey {
            case uses, label, person
            case ttlSeconds = "ttl_seconds"
            case perHour = "per_hour"
        }

        init() {}

        /// Each field is optional, but present means typed: an explicit `null` is refused like
        /// any other mistyped value (schemathesis found `"label": null` accepted).
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.uses) { uses = try c.decode(Int.self, forKey: .uses) }
            if c.contains(.ttlSeconds) { ttlSeconds = try c.decode(Int.self, forKey: .ttlSeconds) }
            if c.contains(.label) { label = try c.decode(String.self, forKey: .label) }
            if c.contains(.person) { person = try c.decode(String.self, forKey: .person) }
            if c.contains(.perHour) { perHour = try c.decode(Int.self, forKey: .perHour) }
        }
    }

    /// `GET /v1/enrollments`: at most `limit` codes, newest first; `truncated` when more exist.
    struct CodeList: Encodable {
        var enrollments: [Listed]
        var truncated: Bool?
    }

    /// One code as listed: what it allows and what it did, never the code.
    struct Listed: Encodable {
        var id: String
        var label: String?
        var person: String?
        var uses: Int?
        var perHour: Int?
        var createdBy: String
        var createdAt: String
        var expiresAt: String
        var revokedAt: String?
        var enrolled: Int

        init(_ listing: EnrollmentCodeListing) {
            let r = listing.record
            id = r.id
            label = r.label
            person = r.person
            uses = r.perHour == nil ? r.usesLeft : nil
            perHour = r.perHour
            createdBy = r.createdBy
            createdAt = WireTimestamp(millis: r.createdMillis).description
            expiresAt = WireTimestamp(millis: r.expiresMillis).description
            revokedAt = listing.revokedMillis.map { WireTimestamp(millis: $0).description }
            enrolled = listing.enrolled
        }

        enum CodingKeys: String, CodingKey {
            case id, label, person, enrolled
            case uses = "uses_left"
            case perHour = "per_hour"
            case createdBy = "created_by"
            case createdAt = "created_at"
            case expiresAt = "expires_at"
            case revokedAt = "revoked_at"
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
