import BeekonPrimitives
import BeekonWire
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// `GET /v1/live`: the event log as Server-Sent Events.
///
/// Every event carries `id: <seq>` (commit order). With `Last-Event-ID` (header, or the
/// `last_event_id` query parameter) the stream first sends every later event from the
/// store, then live ones from the hub — one cursor throughout, so nothing is skipped or
/// sent twice at the switch. Without it the stream starts at the current head. A cursor
/// older than the retention mark (or newer than anything stored) gets a `reset` event
/// whose id is the head. A comment line goes out at a heartbeat tick of the hub to a stream that
/// carried no event since the previous tick (``ViewerStallRule``); `retry:` is sent first.
struct LiveController: Sendable {
    let store: any LocationStore
    let hub: LiveHub
    let access: ViewerAccess
    let retryMillis: Int
    let now: @Sendable () -> Date
    /// The auth-off host and origin checks (the event-driven path bypasses the router's middleware).
    var guarding: LocalOnlyGuard? = nil
    /// The opaque ids of shares' streams (``LiveEventIDs``; nil until the signing key is loaded).
    var shareEventIDs: @Sendable () -> LiveEventIDs? = { nil }
    /// The cap on streams per share (nil: none; admin keys and auth off are never capped).
    var streamHolds: HoldLimit? = nil
    /// Failed credentials per client address, for the event-driven path (the router's
    /// middleware counts them on the route).
    var failures: AuthFailureLimit? = nil

    static let page = 1_000

    func register(on router: Router<IngestRequestContext>) {
        router.get("/v1/live") { request, context in
            await self.open(request, context)
        }
    }

    func open(_ request: Request, _ context: IngestRequestContext) async -> Response {
        let start: LiveStart
        switch await prepare(request) {
        case .refused(let response): return response
        case .stream(let s): start = s
        }
        let stream = LiveStream(controller: self, start: start, logger: context.logger)
        return Response(
            status: .ok, headers: LiveStart.headers,
            body: ResponseBody { writer in
                await stream.run(&writer)
            })
    }

    /// Everything before the first byte of a stream, shared by the Hummingbird route and the
    /// event-driven path (``LiveViewerHandler``): the credential, the device filter, the
    /// `Last-Event-ID` cursor and the log's marks; the refusal to send instead when any fails.
    func prepare(_ request: Request) async -> LiveOpening {
        if let refusal = guarding?.refusal(for: request) { return .refused(refusal) }
        let grant: ViewerGrant
        switch await access.grant(for: request, what: "live") {
        case .refused(let response): return .refused(response)
        case .granted(let g): grant = g
        }
        guard grant.scope.live else {
            return .refused(APIResponse.error(.forbidden, "forbidden", "this share does not include the live stream"))
        }
        let params = request.uri.queryParameters
        var requested: Set<UUID>?
        if let list = params["devices"] {
            var ids = Set<UUID>()
            for part in list.split(separator: ",") {
                guard let id = ReadController.uuid(String(part)) else { return .refused(ReadController.badParameter("devices", "a UUID")) }
                ids.insert(id)
            }
            requested = ids
        }
        let lastID =
            request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?.value
            ?? params["last_event_id"].map(String.init)
        // A share's stream has opaque ids (a numeric id would count the events it does not see).
        var ids: LiveEventIDs?
        if grant.shareId != nil {
            guard let shareIDs = shareEventIDs() else { return .refused(APIResponse.unavailable("the server is starting; retry later")) }
            ids = shareIDs
        }
        var cursor: Int64?
        if let lastID, !lastID.isEmpty {
            guard let n = Self.cursor(lastID.trimmingCharacters(in: .whitespaces), ids: ids) else {
                return .refused(ReadController.badParameter("Last-Event-ID", "an event id from this stream"))
            }
            cursor = n
        }
        let marks: EventLogMarks
        do {
            marks = try await store.eventMarks()
        } catch {
            return .refused(APIResponse.unavailable("the event log could not be read; retry later"))
        }
        // Last: a share holds at most so many streams (issue 50); the hold ends with the stream.
        var hold: Hold?
        if let share = grant.shareId, let streamHolds {
            guard let taken = streamHolds.take(share) else {
                return .refused(streamHolds.refusal("this share", option: "--max-streams-per-share"))
            }
            hold = taken
        }
        return .stream(
            LiveStart(
                scope: grant.scope.narrowed(to: requested), grant: grant, requested: cursor, marks: marks, retryMillis: retryMillis,
                ids: ids, hold: hold))
    }

    /// ``prepare(_:)`` for the event-driven path, which bypasses the router's middleware: a
    /// client `address` past its budget of failed credentials (``AuthFailureLimit``) is refused
    /// first, and a failed credential is counted.
    func prepareCounted(_ request: Request, address: String?) async -> LiveOpening {
        guard let failures, let address else { return await prepare(request) }
        if AuthFailureLimit.isGuarded(request), let wait = failures.retryAfter(address) {
            return .refused(failures.refusal(retryAfter: wait))
        }
        let opening = await prepare(request)
        if case .refused(let response) = opening, AuthFailureLimit.isFailure(request, response.status) { failures.charge(address) }
        return opening
    }

    /// The cursor a `Last-Event-ID` names: an event's sequence on an admin stream; on a share's
    /// stream (`ids`) one of its opaque ids, or `0` (from the oldest event kept). A share's
    /// plain number other than 0 is refused: answered, it would let the share probe for the head.
    static func cursor(_ text: String, ids: LiveEventIDs?) -> Int64? {
        guard let ids else { return Int64(text).flatMap { $0 >= 0 ? $0 : nil } }
        return text == "0" ? 0 : ids.seq(text)
    }
}

/// One open stream on the Hummingbird route (a connection whose first request was not
/// `GET /v1/live`): the cursor loop between the store, the hub and the socket, on its task.
struct LiveStream: Sendable {
    let controller: LiveController
    let start: LiveStart
    let logger: Logger

    func run(_ writer: inout any ResponseBodyWriter) async {
        let hub = controller.hub
        // A share's stream re-checks its share (revocation, expiry) at every re-check tick.
        let subscription = hub.subscribe(share: start.grant.shareId)
        let closing = Locked(false)
        // The Hummingbird route cannot see writability: only the keep-alive part of the rule applies.
        var stall = ViewerStallRule(beats: hub.beats)
        // A viewer that hung up ends the stream at once, not at the next write (issue 28, finding 5).
        let presence = ClientPresence.current
        let goneKey = presence?.onGone {
            closing.value = true
            subscription.continuation.finish()
        }
        defer {
            presence?.forget(goneKey)
            hub.unsubscribe(subscription.id)
            start.hold?.release()
        }
        var cursor = start.cursor
        var signals = subscription.signals.makeAsyncIterator()
        do {
            try await writer.write(start.preamble)
            try await withGracefulShutdownHandler {
                while !closing.value {
                    if !(await start.grant.stillValid()) { break }
                    if let (next, wrote) = try await deliver(after: cursor, into: &writer) {
                        cursor = next
                        if wrote { stall.noteSent() }
                        continue
                    }
                    if stall.check(beats: hub.beats, writable: true) == .keepAlive {
                        try await writer.write(ByteBuffer(string: LiveStart.keepAlive))
                    }
                    guard await signals.next() != nil else { break }
                }
            } onGracefulShutdown: {
                closing.value = true
                subscription.continuation.finish()
            }
        } catch {
            logger.debug("live stream ended", metadata: ["error": "\(error)"])
        }
        try? await writer.finish(nil)
    }

    /// Writes the next events after `cursor` this viewer may see; returns the new cursor and
    /// whether anything was written, or nil when there is nothing new.
    private func deliver(after cursor: Int64, into writer: inout any ResponseBodyWriter) async throws -> (Int64, Bool)? {
        var events: [LiveEvent]
        var shared: LiveFrameCache?
        switch controller.hub.fetch(after: cursor, limit: LiveController.page) {
        case .notReady: return nil
        case .events(let e):
            events = e
            shared = controller.hub.frames
        case .backfill:
            events = try await controller.store.events(after: cursor, limit: LiveController.page)
            if events.isEmpty { return nil }
        }
        guard let last = events.last else { return nil }
        let out = start.frames(events, nowMillis: WireTimestamp(controller.now()).millis, shared: shared)
        guard out.readableBytes > 0 else { return (last.seq, false) }
        try await writer.write(out)
        return (last.seq, true)
    }
}
