import BeekonWire
import Foundation
import Hummingbird
import Logging

/// People and circles (issue 52). A person acts through an access token of one of their
/// devices (an install enrolled with a code bound to that person); an admin key (or auth off)
/// may do everything; an enroller key, a share token and a device bound to no person nothing.
///
/// - `GET /v1/me`, `PUT /v1/me` `{"display_name":…}`: the caller's person and display name.
/// - `POST /v1/circles` `{"name":…}` (an admin adds `"owner":"<person>"`) → 201; the creator owns it.
/// - `GET /v1/circles`: the caller's circles (an admin: every circle).
/// - `GET /v1/circles/{id}`: the circle as the caller sees it (``CircleView``); a non-member gets 404.
/// - `DELETE /v1/circles/{id}` (owner, admin).
/// - `POST /v1/circles/{id}/invitations` `{"expires_in_seconds":…}` (owner, admin) → 201 with a one-use code.
/// - `POST /v1/circles/join` `{"code":…}` (a person): accepts an invitation.
/// - `DELETE /v1/circles/{id}/members/{person}`: leave (oneself), remove (owner), or admin.
/// - `PUT /v1/circles/{id}/members/{person}/sharing` (oneself, admin): what the others see of them.
/// - `POST /v1/circles/{id}/wake`: asks the other members' devices for a fresh fix.
/// - `GET /v1/circles/{id}/live`: the circle's live stream; opening it wakes the circle.
struct CircleController: Sendable {
    let circles: CircleService
    let view: CircleView
    let live: LiveController
    let tokens: TokenService

    /// Registers the routes in one group whose ``CircleMiddleware`` finds the caller (a person or
    /// an admin) before any handler runs; each handler reads it from the context.
    func register(on router: Router<IngestRequestContext>) {
        let callers = router.group().add(middleware: CircleMiddleware(circles: circles))
        callers.get("/v1/me") { request, context in
            try await self.person(context) { person in
                var w = WireJSONWriter(capacity: 128)
                w.raw("{\"person\":")
                w.string(person)
                w.raw(",\"display_name\":")
                if let name = try await self.circles.store.displayName(person: person) { w.string(name) } else { w.raw("null") }
                w.raw("}")
                return APIResponse.json(.ok, w.bytes)
            }
        }
        callers.put("/v1/me") { request, context in
            try await self.person(context) { person in
                guard let body = try await Self.body(request, DisplayNameBody.self) else {
                    return Self.invalid("send {\"display_name\":\"…\"} (null clears it)")
                }
                if let name = body.displayName, let problem = Self.nameProblem(name) { return Self.invalid("display_name: " + problem) }
                try await self.circles.store.setDisplayName(person: person, name: body.displayName, nowMillis: self.circles.nowMillis)
                return Response(status: .noContent)
            }
        }
        callers.post("/v1/circles") { request, context in
            try await self.any(context) { caller in
                guard let body = try await Self.body(request, CreateBody.self) else {
                    return Self.invalid("send {\"name\":\"…\"} (an admin adds \"owner\":\"<person>\")")
                }
                if let problem = Self.nameProblem(body.name) { return Self.invalid("name: " + problem) }
                let owner: String
                switch (caller, body.owner) {
                case (.person(let p), nil): owner = p
                case (.person, _?): return Self.invalid("owner: only an admin names the owner; the creator owns the circle")
                case (.admin, let o?):
                    guard TokenService.isValidSubject(o) else {
                        return Self.invalid("owner: 1–100 printable ASCII characters without spaces")
                    }
                    owner = o
                case (.admin, nil): return Self.invalid("owner: an admin names the person who owns the circle")
                }
                let record = CircleRecord(
                    id: CircleService.newCircleID(), name: body.name, createdBy: owner, createdMillis: self.circles.nowMillis)
                guard try await self.circles.store.createCircle(record, owner: owner, limits: self.circles.limits) else {
                    return Self.bound("too_many_circles", "a person belongs to at most \(self.circles.limits.circlesPerPerson) circles")
                }
                guard let detail = try await self.circles.store.circle(id: record.id) else { return Self.notFound() }
                return APIResponse.json(
                    .created, try await self.view.render(detail, caller: caller, nowMillis: self.circles.nowMillis))
            }
        }
        callers.get("/v1/circles") { request, context in
            try await self.any(context) { caller in
                guard let limit = ReadController.listLimit(request.uri.queryParameters) else {
                    return ReadController.badParameter("limit", "1...\(ReadController.maxList)")
                }
                let all = try await self.circles.store.circles(person: caller.person, limit: limit + 1)
                var w = WireJSONWriter(capacity: 256)
                w.raw("{\"circles\":[")
                for (i, c) in all.prefix(limit).enumerated() {
                    if i > 0 { w.raw(",") }
                    w.raw("{\"id\":")
                    w.string(c.id)
                    w.raw(",\"name\":")
                    w.string(c.name)
                    w.raw(",\"created_at\":")
                    w.string(WireTimestamp(millis: c.createdMillis).description)
                    w.raw("}")
                }
                w.raw("]")
                if all.count > limit { w.raw(",\"truncated\":true") }
                w.raw("}")
                return APIResponse.json(.ok, w.bytes)
            }
        }
        callers.post("/v1/circles/join") { request, context in
            try await self.person(context) { person in
                guard let body = try await Self.body(request, JoinBody.self) else { return Self.invalid("send {\"code\":\"bci1.…\"}") }
                let outcome = try await self.circles.store.acceptInvitation(
                    hash: CircleService.hash(body.code), person: person, nowMillis: self.circles.nowMillis, limits: self.circles.limits)
                switch outcome {
                case .joined(let id), .alreadyMember(let id):
                    self.circles.changed(id)
                    var w = WireJSONWriter(capacity: 96)
                    w.raw("{\"circle_id\":")
                    w.string(id)
                    w.raw(",\"joined\":")
                    w.raw(outcome == .joined(id) ? "true" : "false")
                    w.raw("}")
                    return APIResponse.json(.ok, w.bytes)
                case .invalid:
                    return APIResponse.error(.badRequest, "invalid_invitation", "the invitation is unknown, expired or used")
                case .circleFull:
                    return Self.bound("circle_full", "a circle holds at most \(self.circles.limits.membersPerCircle) members")
                case .tooManyCircles:
                    return Self.bound("too_many_circles", "a person belongs to at most \(self.circles.limits.circlesPerPerson) circles")
                }
            }
        }
        callers.get("/v1/circles/:circle") { request, context in
            try await self.member(context) { caller, detail in
                APIResponse.json(.ok, try await self.view.render(detail, caller: caller, nowMillis: self.circles.nowMillis))
            }
        }
        callers.delete("/v1/circles/:circle") { request, context in
            try await self.member(context, owner: true) { _, detail in
                guard try await self.circles.store.deleteCircle(id: detail.circle.id) else { return Self.notFound() }
                self.circles.changed(detail.circle.id)
                return APIResponse.encode(.ok, ["deleted": detail.circle.id])
            }
        }
        callers.post("/v1/circles/:circle/invitations") { request, context in
            try await self.member(context, owner: true) { caller, detail in
                guard let body = try await Self.body(request, InviteBody.self, emptyAllowed: true) else {
                    return Self.invalid("send {\"expires_in_seconds\":604800} or nothing")
                }
                let ttl = body.expiresInSeconds ?? 7 * 86_400
                guard CircleLimits.invitationTTL.contains(ttl) else {
                    return ReadController.badParameter(
                        "expires_in_seconds", "\(CircleLimits.invitationTTL.lowerBound)…\(CircleLimits.invitationTTL.upperBound)")
                }
                let code = CircleService.newInvitationCode()
                let nowMs = self.circles.nowMillis
                let invitation = CircleInvitation(
                    hash: CircleService.hash(code), circleId: detail.circle.id, createdBy: caller.person ?? "admin", createdMillis: nowMs,
                    expiresMillis: nowMs + Int64(ttl) * 1000)
                guard try await self.circles.store.insertInvitation(invitation, limits: self.circles.limits, nowMillis: nowMs) else {
                    return Self.bound(
                        "too_many_invitations",
                        "a circle has at most \(self.circles.limits.invitationsPerCircle) unused invitations; let one expire or be used")
                }
                var w = WireJSONWriter(capacity: 200)
                w.raw("{\"code\":")
                w.string(code)
                w.raw(",\"id\":")
                w.string(invitation.id)
                w.raw(",\"circle_id\":")
                w.string(detail.circle.id)
                w.raw(",\"expires_at\":")
                w.string(WireTimestamp(millis: invitation.expiresMillis).description)
                w.raw("}")
                var headers = HTTPFields()
                headers[.cacheControl] = "no-store"
                return APIResponse.json(.created, w.bytes, headers: headers)
            }
        }
        callers.delete("/v1/circles/:circle/members/:person") { request, context in
            try await self.member(context) { caller, detail in
                guard let target = Self.personParameter(context) else { return Self.badPerson() }
                let mine = caller.person.flatMap(detail.member)
                guard caller == .admin || target == caller.person || mine?.role == .owner else {
                    return APIResponse.error(.forbidden, "forbidden", "only the circle's owner removes another member")
                }
                guard try await self.circles.store.removeMember(circleId: detail.circle.id, person: target) else {
                    return APIResponse.error(.notFound, "not_found", "no such member in this circle")
                }
                self.circles.changed(detail.circle.id)
                return Response(status: .noContent)
            }
        }
        callers.put("/v1/circles/:circle/members/:person/sharing") { request, context in
            try await self.member(context) { caller, detail in
                guard let target = Self.personParameter(context) else { return Self.badPerson() }
                guard caller == .admin || target == caller.person else {
                    return APIResponse.error(.forbidden, "forbidden", "a member sets only their own sharing")
                }
                guard let current = detail.member(target) else {
                    return APIResponse.error(.notFound, "not_found", "no such member in this circle")
                }
                guard let body = try await Self.body(request, SharingBody.self) else {
                    return Self.invalid(
                        "send {\"precision_m\":1000,\"hours\":\"07:00-19:00\",\"time_zone\":\"Europe/Berlin\",\"paused\":false}")
                }
                let scope = ShareScope(precisionMeters: body.precisionMeters, hours: body.hours, timeZone: body.timeZone)
                do {
                    try scope.validate()
                } catch {
                    return Self.invalid(String(describing: error))
                }
                let paused = body.paused == true ? (current.sharing.pausedMillis ?? self.circles.nowMillis) : nil
                let sharing = MemberSharing(
                    precisionMeters: body.precisionMeters, hours: body.hours, timeZone: body.timeZone, pausedMillis: paused)
                guard try await self.circles.store.setSharing(circleId: detail.circle.id, person: target, sharing: sharing) else {
                    return APIResponse.error(.notFound, "not_found", "no such member in this circle")
                }
                self.circles.changed(detail.circle.id)
                var w = WireJSONWriter(capacity: 128)
                CircleView.write(sharing, into: &w)
                return APIResponse.json(.ok, w.bytes)
            }
        }
        callers.post("/v1/circles/:circle/wake") { request, context in
            try await self.member(context) { caller, detail in
                let wakes = try await self.circles.wake(detail, caller: caller)
                return APIResponse.json(
                    .accepted, try await self.view.render(detail, caller: caller, nowMillis: self.circles.nowMillis, wakes: wakes))
            }
        }
        callers.get("/v1/circles/:circle/live") { request, context in
            try await self.member(context) { caller, detail in
                try await self.stream(request, context, caller, detail)
            }
        }
    }

    // MARK: The live stream

    /// Opens the circle's stream: the members' devices at their members' sharing (as
    /// ``LiveController`` streams a share, with opaque ids and `Last-Event-ID`), a `circle`
    /// event first with the view after the wake-up, then the events; it ends when the circle's
    /// members or sharing change (the viewer reconnects with the new rules, or is refused).
    private func stream(
        _ request: Request, _ context: IngestRequestContext, _ caller: CircleCaller, _ detail: CircleDetail
    ) async throws -> Response {
        guard let ids = tokens.liveEventIDs() else { return APIResponse.unavailable("the server is starting; retry later") }
        let lastID =
            request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?.value
            ?? request.uri.queryParameters["last_event_id"].map(String.init)
        var cursor: Int64?
        if let lastID, !lastID.isEmpty {
            guard let n = LiveController.cursor(lastID.trimmingCharacters(in: .whitespaces), ids: ids) else {
                return ReadController.badParameter("Last-Event-ID", "an event id from this stream")
            }
            cursor = n
        }
        // A person holds at most so many streams, as a share does (admins are never capped).
        var hold: Hold?
        if caller.person != nil, let holds = live.streamHolds {
            guard let taken = holds.take(caller.viewerKey) else {
                return holds.refusal("this person", option: "--max-streams-per-share")
            }
            hold = taken
        }
        let start: LiveStart
        do {
            // The head before the wake-up: the requests it makes are the stream's first events.
            let marks = try await live.store.eventMarks()
            // A reconnect (with a cursor) does not wake anyone again.
            let wakes = cursor == nil ? try await circles.wake(detail, caller: caller) : nil
            let snapshot = try await view.render(detail, caller: caller, nowMillis: circles.nowMillis, wakes: wakes)
            let key = CircleService.streamKey(detail.circle.id, version: detail.circle.version)
            let service = circles
            let grant = ViewerGrant(
                scope: CircleService.scope(detail, viewer: caller.person), shareId: key,
                validity: { await service.isActive(streamKey: key) })
            start = LiveStart(
                scope: grant.scope, grant: grant, requested: cursor, marks: marks, retryMillis: live.retryMillis, ids: ids, hold: hold,
                greeting: "event: circle\ndata: " + String(decoding: snapshot, as: UTF8.self) + "\n\n")
        } catch {
            hold?.release()
            throw error
        }
        let stream = LiveStream(controller: live, start: start, logger: context.logger)
        return Response(status: .ok, headers: LiveStart.headers, body: ResponseBody { writer in await stream.run(&writer) })
    }

    // MARK: Checks

    /// A route any caller may use (a person or an admin), with the caller ``CircleMiddleware`` found.
    private func any(_ context: IngestRequestContext, _ body: (CircleCaller) async throws -> Response) async throws(APIError)
        -> Response
    {
        let caller = try context.requireCircleCaller()
        return await Self.mapFailure(context) { try await body(caller) }
    }

    /// A route only a person may use (an admin is no person: 403).
    private func person(_ context: IngestRequestContext, _ body: (String) async throws -> Response) async throws(APIError)
        -> Response
    {
        try await any(context) { caller in
            guard let person = caller.person else {
                return APIResponse.error(.forbidden, "forbidden", "an admin key is no person: call this with a person's device token")
            }
            return try await body(person)
        }
    }

    /// A route of one circle: its members (with `owner`, only its owners) and admins; anyone
    /// else learns nothing of it (404, as for a circle that does not exist).
    private func member(
        _ context: IngestRequestContext, owner: Bool = false,
        _ body: (CircleCaller, CircleDetail) async throws -> Response
    ) async throws(APIError) -> Response {
        try await any(context) { caller in
            guard let id = context.parameters.get("circle"), CircleService.isCircleID(id) else {
                return ReadController.badParameter("circle_id", "a circle id (cir_ and 24 hex digits)")
            }
            guard let detail = try await self.circles.store.circle(id: id) else { return Self.notFound() }
            if let person = caller.person {
                guard let me = detail.member(person) else { return Self.notFound() }
                if owner, me.role != .owner { return APIResponse.error(.forbidden, "forbidden", "only the circle's owner may do this") }
            }
            return try await body(caller, detail)
        }
    }

    private static func mapFailure(_ context: IngestRequestContext, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch {
            context.logger.error("circle request failed", metadata: ["error": "\(error)"])
            return APIResponse.unavailable("the database could not be reached; retry later")
        }
    }

    static func notFound() -> Response { APIResponse.error(.notFound, "not_found", "no such circle") }

    static func invalid(_ message: String) -> Response { APIResponse.error(.badRequest, "invalid_request", message) }

    /// 422 for a request past one of the bounds (``CircleLimits``).
    static func bound(_ code: String, _ message: String) -> Response { APIResponse.error(.unprocessableContent, code, message) }

    static func badPerson() -> Response { ReadController.badParameter("person", "1–100 printable ASCII characters without spaces") }

    /// The `person` path parameter, percent-decoded and checked like an enrolment code's person.
    static func personParameter(_ context: IngestRequestContext) -> String? {
        guard let raw = context.parameters.get("person"), let person = raw.removingPercentEncoding,
            TokenService.isValidSubject(person)
        else { return nil }
        return person
    }

    /// Why a name (a circle's, a display name) is refused; nil when it is fine.
    static func nameProblem(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= CircleLimits.nameBytes else { return "1…\(CircleLimits.nameBytes) bytes of UTF-8" }
        return WireLimits.textProblem(name)
    }

    /// A small JSON body decoded strictly; nil when it is not one (or, unless `emptyAllowed`, empty).
    static func body<T: Decodable>(_ request: Request, _ type: T.Type, emptyAllowed: Bool = false) async throws -> T? {
        var request = request
        guard let buffer = try? await request.collectBody(upTo: 16_384) else { return nil }
        if buffer.readableBytes == 0 { return emptyAllowed ? try? JSONDecoder().decode(T.self, from: Data("{}".utf8)) : nil }
        return try? JSONDecoder().decode(T.self, from: Data(buffer: buffer))
    }

    struct DisplayNameBody: Decodable {
        var displayName: String?
        enum CodingKeys: String, CodingKey { case displayName = "display_name" }
    }

    /// Present means typed (as an enrolment spec): an explicit `null` is refused like any other
    /// mistyped value (schemathesis found `"expires_in_seconds": null` accepted).
    struct CreateBody: Decodable {
        var name: String
        var owner: String?
        enum CodingKeys: String, CodingKey { case name, owner }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            if c.contains(.owner) { owner = try c.decode(String.self, forKey: .owner) }
        }
    }

    struct JoinBody: Decodable {
        var code: String
    }

    struct InviteBody: Decodable {
        var expiresInSeconds: Int?
        enum CodingKeys: String, CodingKey { case expiresInSeconds = "expires_in_seconds" }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            if c.contains(.expiresInSeconds) { expiresInSeconds = try c.decode(Int.self, forKey: .expiresInSeconds) }
        }
    }

    struct SharingBody: Decodable {
        var precisionMeters: Double?
        var hours: String?
        var timeZone: String?
        var paused: Bool?
        enum CodingKeys: String, CodingKey {
            case hours, paused
            case precisionMeters = "precision_m"
            case timeZone = "time_zone"
        }

        /// `null` clears a setting (full precision, all day); `paused` is true or false when sent.
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            precisionMeters = try c.decodeIfPresent(Double.self, forKey: .precisionMeters)
            hours = try c.decodeIfPresent(String.self, forKey: .hours)
            timeZone = try c.decodeIfPresent(String.self, forKey: .timeZone)
            if c.contains(.paused) { paused = try c.decode(Bool.self, forKey: .paused) }
        }
    }
}

/// Finds the caller of a circle route (``CircleService/caller(_:)``: a person through a device
/// token of theirs, or an admin) and puts it in the context; 401 without a valid credential,
/// 403 for an enroller key or a device bound to no person, 401 `device_revoked` for a revoked one.
struct CircleMiddleware: RouterMiddleware {
    /// The caller checks.
    let circles: CircleService

    func handle(
        _ request: Request, context: IngestRequestContext, next: (Request, IngestRequestContext) async throws -> Response
    ) async throws -> Response {
        switch await circles.caller(request) {
        case .refused(let response): return response
        case .caller(let caller):
            var context = context
            context.circleCaller = caller
            return try await next(request, context)
        }
    }
}
