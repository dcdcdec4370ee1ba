import BeekonWire
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// Locate on demand (SPEC BY-2, BY-3):
///
/// - `POST /v1/devices/{install_id}/locate` (admin key, or a share with `locate` that covers
///   the device) → 202 with the new request; 429 + `Retry-After` over the per-device limit.
/// - `GET /v1/devices/{install_id}/locate/{request_id}` → the request as it stands.
/// - `GET /v1/devices/{install_id}/commands?wait=S` (the device's own credential): long-poll
///   command channel; answers at once with the open requests (marking them delivered), or
///   after up to `S` seconds (default 25, at most 60) with an empty list.
/// - `POST /v1/devices/{install_id}/locate/{request_id}/answer` (device credential):
///   `{"outcome":"refused","reason":"…"}`. A fix answers by carrying `locate_request_id`
///   in an ordinary upload.
/// - `PUT /v1/devices/{install_id}/push-token` (device credential, issue 30): registers or
///   replaces the device's push token (`PushToken.Registration`) → 204; `DELETE` removes it → 204.
///   No route returns a token: a share, or anyone else, can never read one (SPEC BY-7, XR-6).
struct LocateController: Sendable {
    let locates: LocateService
    let auth: Authenticator
    let access: ViewerAccess
    let hub: LiveHub
    /// Where push tokens are kept (nil: the push-token routes answer 503).
    var pushTokens: (any PushTokenStore)? = nil
    /// Wakes a device with a push token for each new request (nil or unconfigured: no pushes).
    var pushes: PushDispatcher? = nil
    /// The APNs topics tokens may name (nil: APNs is off, any topic is kept; issue 50).
    var apnsTopics: Set<String>? = nil
    /// The cap on command long-polls per device credential (nil: none; admin keys and auth off
    /// are never capped).
    var pollHolds: HoldLimit? = nil

    /// Registers the routes: the viewer routes in a group whose ``ViewerMiddleware`` checks the
    /// reader for the path's device, the device routes in a group whose ``DeviceMiddleware``
    /// checks the device's own credential; each handler reads both from the context.
    func register(on router: Router<IngestRequestContext>) {
        let viewers = router.group().add(middleware: ViewerMiddleware(access: access, what: "locate", device: "install_id"))
        let devices = router.group().add(middleware: DeviceMiddleware(auth: auth))
        viewers.post("/v1/devices/:install_id/locate") { request, context in
            try await self.viewer(context) { grant, install in
                guard grant.scope.locate else {
                    return APIResponse.error(.forbidden, "forbidden", "this share does not allow locate requests")
                }
                // A fresh fix is taken now: outside a share's hours it would not be the share's to see (issue 31).
                let now = self.locates.nowMillis
                guard grant.scope.admits(millis: now, nowMillis: now) else {
                    return APIResponse.error(.forbidden, "forbidden", "this share's hours do not include now")
                }
                switch try await self.locates.create(installId: install, requestedBy: grant.shareId ?? "admin") {
                case .created(var r):
                    self.pushes?.enqueue(r)
                    r.requestedBy = grant.scope.requester(r.requestedBy)
                    var headers = HTTPFields()
                    headers[.location] = "/v1/devices/\(install.wireString)/locate/\(r.id.wireString)"
                    return APIResponse.json(.accepted, Array(r.json().utf8), headers: headers)
                case .limited(let seconds):
                    var headers = HTTPFields()
                    headers[.retryAfter] = "\(seconds)"
                    return APIResponse.error(
                        .tooManyRequests, "rate_limited", "too many locate requests for this device; retry in \(seconds) s",
                        headers: headers)
                }
            }
        }
        viewers.get("/v1/devices/:install_id/locate/:request_id") { request, context in
            try await self.viewer(context) { grant, install in
                let id = try context.parameters.require("request_id", as: UUID.self)
                guard var r = try await self.locates.request(id: id), r.installId == install else { return Self.unknown() }
                let now = self.locates.nowMillis
                // Nothing of a request made outside a share's hours or window (issue 50), and the
                // answer's fix and the steps' times only when the share may see them (issue 31).
                guard grant.scope.seesLocateRequest(createdAtMillis: r.createdAtMillis, nowMillis: now) else { return Self.unknown() }
                if grant.scope.rules.limitsTime { r.narrow(to: grant.scope, nowMillis: now) }
                r.requestedBy = grant.scope.requester(r.requestedBy)
                return APIResponse.json(.ok, Array(r.json(for: grant.scope).utf8))
            }
        }
        devices.get("/v1/devices/:install_id/commands") { request, context in
            try await self.device(context) { install, principal in
                let wait = request.uri.queryParameters["wait"].map { Double(String($0)) } ?? 25
                guard let wait, wait.isFinite, (0...60).contains(wait) else {
                    return ReadController.badParameter("wait", "seconds 0…60")
                }
                // A device credential holds at most so many polls at once (issue 50).
                var hold: Hold?
                if case .device(let subject) = principal, let pollHolds = self.pollHolds {
                    guard let taken = pollHolds.take(subject) else {
                        return pollHolds.refusal("this credential", option: "--max-long-polls-per-credential")
                    }
                    hold = taken
                }
                defer { hold?.release() }
                let valid: @Sendable () async -> Bool = { await self.auth.stillValid(principal, for: install) }
                let pending = try await self.poll(install, wait: .milliseconds(Int(wait * 1000)), stillValid: valid)
                // Revoked while it waited: the device learns at once (its refresh then fails for good).
                if pending.isEmpty, await !valid() {
                    return APIResponse.unauthorized("this device was revoked by an admin", error: "device_revoked")
                }
                return APIResponse.json(.ok, Self.commands(pending))
            }
        }
        devices.post("/v1/devices/:install_id/locate/:request_id/answer") { request, context in
            try await self.device(context) { install, _ in
                let id = try context.parameters.require("request_id", as: UUID.self)
                let body = try? await request.body.collect(upTo: 16_384)
                guard let body, let refusal = try? WireLocateRefusal.decode(Data(buffer: body)) else {
                    return APIResponse.error(
                        .badRequest, "invalid_request",
                        "send {\"outcome\":\"refused\",\"reason\":\"…\"}; a fix answers by carrying locate_request_id in an upload")
                }
                guard let current = try await self.locates.request(id: id), current.installId == install else { return Self.unknown() }
                let r = try await self.locates.apply(.refuse(reason: refusal.reason), to: id) ?? current
                return APIResponse.json(.ok, Array(r.json().utf8))
            }
        }
        // The device's push token (issue 30): the same device-authorization path as the
        // command channel, so a credential bound to another install is refused here too.
        devices.put("/v1/devices/:install_id/push-token") { request, context in
            try await self.device(context) { install, _ in
                guard let store = self.pushTokens else { return APIResponse.unavailable("push tokens are not stored by this server") }
                let body = try? await request.body.collect(upTo: 8_192)
                switch PushToken.parse(
                    body.map { Array(buffer: $0) } ?? [], installId: install, nowMillis: self.locates.nowMillis, apnsTopics: self.apnsTopics
                )
                {
                case .failure(let refusal):
                    return APIResponse.error(.badRequest, "invalid_request", refusal.message)
                case .success(let token):
                    try await store.setPushToken(token)
                    return Response(status: .noContent)
                }
            }
        }
        devices.delete("/v1/devices/:install_id/push-token") { request, context in
            try await self.device(context) { install, _ in
                guard let store = self.pushTokens else { return APIResponse.unavailable("push tokens are not stored by this server") }
                try await store.removePushToken(installId: install, ifToken: nil)
                return Response(status: .noContent)
            }
        }
    }

    /// What wakes a waiting poll.
    private enum Wake: Sendable { case changed, tick }

    /// The open requests (marked delivered) as soon as there are any, or none after `wait`;
    /// none at once when `stillValid` turns false (a device revoked while it waits).
    /// `wait` is measured on the server's clock (`LocateService.now`), like every other time
    /// the server keeps: a test that freezes that clock knows the poll cannot end by its wait.
    ///
    /// The device's requests are read at the start and again only when the hub reads a change
    /// of one of them from the event log (on any instance); the deadline and `stillValid` are
    /// checked once a second. (Issue 50: a poll raced a one-second sleep against its wake-up
    /// stream and cancelled the loser, which finishes an `AsyncStream`; from then on it re-read
    /// the store in a busy loop, and 200 idle polls burned both cores.)
    func poll(
        _ install: UUID, wait: Duration, stillValid: @Sendable () async -> Bool = { true }
    ) async throws(StoreError) -> [LocateRequest] {
        let now = locates.now
        let deadline = now().addingTimeInterval(wait / .seconds(1))
        let (signals, continuation) = AsyncStream.makeStream(of: Wake.self)
        let subscriber = hub.subscribe(commandsOf: install, wake: { continuation.yield(.changed) }, finish: { continuation.finish() })
        // A device that hung up ends the wait at once and is delivered nothing (issue 28, finding 5).
        let presence = ClientPresence.current
        let goneKey = presence?.onGone { continuation.finish() }
        defer {
            presence?.forget(goneKey)
            hub.unsubscribe(subscriber)
            continuation.finish()
        }
        // One iterator for the whole poll, never cancelled while it waits.
        var wakes = signals.makeAsyncIterator()
        var changed = true
        while true {
            guard await stillValid() else { return [] }
            if presence?.isGone == true { return [] }
            if changed {
                let pending = try await locates.deliver(to: install)
                if !pending.isEmpty { return pending }
            }
            let left = deadline.timeIntervalSince(now())
            if left <= 0 || Task.isCancelled || Task.isShuttingDownGracefully { return [] }
            let slice = Duration.milliseconds(Int64((min(left, 1) * 1000).rounded(.up)))
            let tick = Task {
                try? await Task.sleep(for: slice)
                continuation.yield(.tick)
            }
            let wake = await wakes.next()
            tick.cancel()
            guard let wake else { return [] }
            changed = wake == .changed
        }
    }

    /// The command channel's answer (`WireCommands`): the open requests as devices see them.
    static func commands(_ pending: [LocateRequest]) -> [UInt8] {
        [UInt8](WireCommands(locateRequests: pending.map(\.notice)).encoded())
    }

    static func unknown() -> Response {
        APIResponse.error(.notFound, "not_found", "no such locate request for this device")
    }

    /// A viewer route's body with the grant and device ``ViewerMiddleware`` checked (admin key,
    /// share covering the device, or auth off).
    private func viewer(
        _ context: IngestRequestContext, _ body: (ViewerGrant, UUID) async throws -> Response
    ) async throws(APIError) -> Response {
        let (grant, install) = try (context.requireViewer(), context.requireDevice())
        return try await Self.mapFailure(context) { try await body(grant, install) }
    }

    /// A device route's body with the device and principal ``DeviceMiddleware`` checked (any
    /// credential that may upload; an access token only for the install it is bound to).
    private func device(
        _ context: IngestRequestContext, _ body: (UUID, Principal) async throws -> Response
    ) async throws(APIError) -> Response {
        let (install, principal) = try (context.requireDevice(), context.requirePrincipal())
        return try await Self.mapFailure(context) { try await body(install, principal) }
    }

    /// Runs a route's body; a refusal it throws (``APIError``) is sent as it is, any other
    /// failure (the store's) becomes 503.
    private static func mapFailure(
        _ context: IngestRequestContext, _ body: () async throws -> Response
    ) async throws(APIError) -> Response {
        do {
            return try await body()
        } catch let refusal as APIError {
            throw refusal
        } catch {
            context.logger.error("locate request failed", metadata: ["error": "\(error)"])
            return APIResponse.unavailable("the database could not be reached; retry later")
        }
    }
}
