import BeekonWire
import Foundation
import Hummingbird
import Logging

/// The read API (JSON). With auth on, it needs an API key (device tokens may only upload).
///
/// - `GET /v1/devices` — devices with their newest fix *by fix time* and its staleness
/// - `GET /v1/devices/{install_id}/sessions` — sessions, newest first
/// - `GET /v1/sessions/{session_id}/track` — GeoJSON (`[lon, lat]`)
/// - `GET /v1/devices/{install_id}/fixes?from=&to=&limit=&cursor=` — paged fixes
/// - `GET /v1/devices/{install_id}/proximity-events?from=&to=&limit=` — beacon proximity events (BY-5)
struct ReadController: Sendable {
    let store: any LocationStore
    let access: ViewerAccess
    let staleAfterSeconds: Int
    let now: @Sendable () -> Date
    /// Computes each device's status (`live` / `delayed` / `silent`).
    var monitor: DeviceStatusMonitor? = nil

    static let maxPage = 5000

    /// Registers the routes, each in a group whose ``ViewerMiddleware`` checks the reader (and
    /// records `what` for shares) before the handler reads the grant from the context.
    func register(on router: Router<IngestRequestContext>) {
        func reading(_ what: String) -> RouterGroup<IngestRequestContext> {
            router.group().add(middleware: ViewerMiddleware(access: access, what: what))
        }
        reading("devices").get("/v1/devices") { request, context in
            try await self.answering(context) { scope in
                guard let limit = Self.listLimit(request.uri.queryParameters) else {
                    return Self.badParameter("limit", "1...\(Self.maxList)")
                }
                return try await self.devices(scope, limit: limit)
            }
        }
        reading("sessions").get("/v1/devices/:install_id/sessions") { request, context in
            let id = try context.parameters.require("install_id", as: UUID.self)
            return try await self.answering(context) { scope in
                guard scope.sees(id) else { return Self.notShared() }
                guard let limit = Self.listLimit(request.uri.queryParameters) else {
                    return Self.badParameter("limit", "1...\(Self.maxList)")
                }
                return try await self.sessions(id, scope, limit: limit)
            }
        }
        reading("track").get("/v1/sessions/:session_id/track") { request, context in
            let id = try context.parameters.require("session_id", as: UUID.self)
            return try await self.answering(context) { scope in try await self.track(id, request.uri.queryParameters, scope) }
        }
        reading("fixes").get("/v1/devices/:install_id/fixes") { request, context in
            let id = try context.parameters.require("install_id", as: UUID.self)
            return try await self.answering(context) { scope in
                guard scope.sees(id) else { return Self.notShared() }
                return try await self.fixes(id, request.uri.queryParameters, scope)
            }
        }
        reading("proximity events").get("/v1/devices/:install_id/proximity-events") { request, context in
            let id = try context.parameters.require("install_id", as: UUID.self)
            return try await self.answering(context) { scope in
                guard scope.sees(id) else { return Self.notShared() }
                return try await self.proximityEvents(id, request.uri.queryParameters, scope)
            }
        }
    }

    /// Runs a read with the grant its group's middleware checked; store failures become 503.
    private func answering(
        _ context: IngestRequestContext, _ body: (ViewerScope) async throws -> Response
    ) async throws(APIError) -> Response {
        let scope = try context.requireViewer().scope
        do {
            return try await body(scope)
        } catch {
            context.logger.error("read failed", metadata: ["error": "\(error)"])
            return APIResponse.unavailable("the database could not be read; retry later")
        }
    }

    func devices(_ scope: ViewerScope = .everything, limit: Int = maxList) async throws(StoreError) -> Response {
        let nowMs = WireTimestamp(now()).millis
        let all = try await store.devices().filter { scope.sees($0.installId) }
        let devices = all.prefix(limit)
        var w = WireJSONWriter(capacity: 256 + devices.count * 400)
        w.raw("{\"stale_after_seconds\":")
        w.number(Double(staleAfterSeconds))
        w.raw(",\"devices\":[")
        for (i, d) in devices.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"install_id\":")
            w.string(d.installId.wireString)
            w.raw(",\"platform\":")
            w.string(d.platform)
            w.raw(",\"sdk_version\":")
            w.string(d.sdkVersion)
            if let model = d.model {
                w.raw(",\"model\":")
                w.string(model)
            }
            // The count covers all time: a share with a history window or hours does not learn it.
            if !scope.rules.limitsTime {
                w.raw(",\"fix_count\":")
                w.number(Double(d.fixCount))
            }
            // Contact and status only for a viewer whose share is not limited in time (ShareScope.showsContact).
            if scope.rules.showsContact {
                w.raw(",\"last_received_at\":")
                w.string(d.lastReceivedAt.description)
                w.raw(",\"last_contact_at\":")
                w.string(d.lastReceivedAt.description)
            }
            if let monitor {
                w.raw(",\"expected_interval_seconds\":")
                w.number(Double(d.expectedIntervalSeconds ?? monitor.defaultExpectedSeconds))
                if scope.rules.showsContact {
                    w.raw(",\"status\":")
                    w.string(monitor.status(of: d, nowMillis: nowMs).rawValue)
                    if let paused = DeviceTimes(d).pausedSinceMillis(nowMillis: nowMs) {
                        w.raw(",\"paused_since\":")
                        w.string(WireTimestamp(millis: paused).description)
                    }
                }
            }
            if let fix = try await lastVisibleFix(d, scope, nowMillis: nowMs) {
                let age = max(0, Double(nowMs - fix.location.timestamp.millis) / 1000)
                w.raw(",\"last_fix_at\":")
                w.string(fix.location.timestamp.description)
                w.raw(",\"staleness_seconds\":")
                w.number(age.rounded(.down))
                w.raw(",\"stale\":")
                w.raw(age > Double(staleAfterSeconds) ? "true" : "false")
                w.raw(",\"last_fix\":")
                ViewerJSON.write(fix, into: &w)
            } else {
                w.raw(",\"stale\":true")
            }
            w.raw("}")
        }
        w.raw("]")
        if all.count > limit { w.raw(",\"truncated\":true") }
        w.raw("}")
        return APIResponse.json(.ok, w.bytes)
    }

    /// The newest fix `scope` may see of a device, coarsened as it requires: the device's newest
    /// fix when only a history window limits time (a newer fix would be inside it too), else the
    /// newest one its hours admit, found from the device's activity (`ShareScope.newestFixMillis`).
    func lastVisibleFix(_ d: DeviceSummary, _ scope: ViewerScope, nowMillis: Int64) async throws(StoreError) -> StoredFix? {
        guard scope.rules.filtersEachFix else { return d.lastFix.flatMap { scope.visible($0, nowMillis: nowMillis) } }
        let minutes = try await store.activity(
            installId: d.installId, sinceMillis: scope.windowStart(nowMillis: nowMillis), limit: ShareScope.activityLimit)
        guard let millis = scope.rules.newestFixMillis(in: minutes, nowMillis: nowMillis) else { return nil }
        let page = try await store.fixes(
            FixQuery(
                installId: d.installId, from: WireTimestamp(millis: millis), to: WireTimestamp(millis: millis + 1), limit: Self.maxPage))
        return page.fixes.last { $0.location.timestamp.millis <= $0.receivedAt.millis + FixClock.futureToleranceMillis }
            .flatMap { scope.visible($0, nowMillis: nowMillis) }
    }

    func sessions(_ installId: UUID, _ scope: ViewerScope = .everything, limit: Int = maxList) async throws(StoreError) -> Response {
        let nowMs = WireTimestamp(now()).millis
        let since = scope.windowStart(nowMillis: nowMs)
        let all: [SessionSummary]
        var cut = false
        if scope.rules.filtersEachFix {
            // Hours of the day: each session summarised from what the share admits (ShareScope).
            let minutes = try await store.activity(installId: installId, sinceMillis: since, limit: ShareScope.activityLimit)
            cut = minutes.count >= ShareScope.activityLimit
            all = scope.rules.sessions(from: minutes, installId: installId, nowMillis: nowMs)
        } else {
            all = try await store.sessions(installId: installId, sinceMillis: since, limit: limit + 1)
        }
        let sessions = all.prefix(limit)
        var w = WireJSONWriter(capacity: 128 + sessions.count * 200)
        w.raw("{\"install_id\":")
        w.string(installId.wireString)
        w.raw(",\"sessions\":[")
        for (i, s) in sessions.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"session_id\":")
            w.string(s.sessionId.wireString)
            if let first = s.firstFixAt {
                w.raw(",\"first_fix_at\":")
                w.string(first.description)
            }
            if let last = s.lastFixAt {
                w.raw(",\"last_fix_at\":")
                w.string(last.description)
            }
            w.raw(",\"fix_count\":")
            w.number(Double(s.fixCount))
            w.raw(",\"geofence_event_count\":")
            w.number(Double(s.eventCount))
            w.raw("}")
        }
        w.raw("]")
        if all.count > limit || cut { w.raw(",\"truncated\":true") }
        w.raw("}")
        return APIResponse.json(.ok, w.bytes)
    }

    /// Fixes per track page by default and at most (issue 28: a 200,000-fix session once took a
    /// viewer's four requests from 135 MB to 1 GB of server memory).
    static let trackPage = 5_000

    /// Fixes a share with hours reads at most for one page (like the dashboard's history, XR-3).
    static let hoursScanLimit = 4_000_000

    /// One page of the fixes `scope` may see, read by `read` from a cursor. With hours of the day
    /// (issue 31) a store page's cursor could point at a fix the share may not see, and its time
    /// would tell of it: pages are read on until `limit` visible fixes are found or the store
    /// has no more, and the cursor is the last visible fix (past ``hoursScanLimit`` fixes read,
    /// the store's cursor). Otherwise one store page, filtered, with its cursor, as before.
    private func visiblePage(
        _ scope: ViewerScope, limit: Int, after: FixCursor?, nowMillis: Int64,
        _ read: (FixCursor?) async throws(StoreError) -> FixPage
    ) async throws(StoreError) -> FixPage {
        var after = after
        var out = FixPage(fixes: [], next: nil)
        var scanned = 0
        while true {
            let page = try await read(after)
            scanned += page.fixes.count
            for fix in page.fixes {
                guard let seen = scope.visible(fix, nowMillis: nowMillis) else { continue }
                out.fixes.append(seen)
                if scope.rules.filtersEachFix, out.fixes.count == limit, page.next != nil || fix != page.fixes.last {
                    out.next = FixCursor(millis: fix.location.timestamp.millis, id: fix.location.id)
                    return out
                }
            }
            guard scope.rules.filtersEachFix, let next = page.next, scanned < Self.hoursScanLimit else {
                out.next = page.next
                return out
            }
            after = next
        }
    }

    /// One page of a session's track (`limit` 1…`trackPage`, `cursor` from the previous page's `next_cursor`).
    func track(_ sessionId: UUID, _ params: Parameters = .init(), _ scope: ViewerScope = .everything) async throws(StoreError) -> Response {
        let nowMs = WireTimestamp(now()).millis
        // A session belongs to one device: a share that does not see it gets the same 404 as
        // for a session that does not exist, before any page is read — filtering the page's
        // fixes alone still handed out the store's next_cursor, B's fix times and ids.
        if scope.devices != nil, let first = try await store.track(TrackQuery(sessionId: sessionId, limit: 1)).fixes.first,
            !scope.sees(first.installId)
        {
            return APIResponse.error(.notFound, "not_found", "no fixes stored for session \(sessionId.wireString)")
        }
        var query = TrackQuery(sessionId: sessionId, sinceMillis: scope.windowStart(nowMillis: nowMs), limit: Self.trackPage)
        if let text = params["limit"] {
            guard let n = Int(text), (1...Self.trackPage).contains(n) else {
                return Self.badParameter("limit", "1...\(Self.trackPage)")
            }
            query.limit = n
        }
        if let cursor = params["cursor"] {
            guard let c = FixCursor(token: String(cursor)) else { return Self.badParameter("cursor", "a next_cursor value") }
            query.after = c
        }
        let page = try await visiblePage(scope, limit: query.limit, after: query.after, nowMillis: nowMs) {
            (after: FixCursor?) throws(StoreError) -> FixPage in
            var q = query
            q.after = after
            return try await store.track(q)
        }
        let fixes = page.fixes
        guard !fixes.isEmpty || query.after != nil else {
            return APIResponse.error(.notFound, "not_found", "no fixes stored for session \(sessionId.wireString)")
        }
        return APIResponse.json(
            .ok, GeoJSONTrack.render(sessionId: sessionId, fixes: fixes, next: page.next), contentType: "application/geo+json")
    }

    func fixes(_ installId: UUID, _ params: Parameters, _ scope: ViewerScope = .everything) async throws(StoreError) -> Response {
        var query = FixQuery(installId: installId)
        if let bad = window(params, scope, into: &query) { return bad }
        if let cursor = params["cursor"] {
            guard let c = FixCursor(token: String(cursor)) else { return Self.badParameter("cursor", "a next_cursor value") }
            query.after = c
        }
        let nowMs = WireTimestamp(now()).millis
        let page = try await visiblePage(scope, limit: query.limit, after: query.after, nowMillis: nowMs) {
            (after: FixCursor?) throws(StoreError) -> FixPage in
            var q = query
            q.after = after
            return try await store.fixes(q)
        }
        var w = WireJSONWriter(capacity: 128 + page.fixes.count * 300)
        w.raw("{\"install_id\":")
        w.string(installId.wireString)
        w.raw(",\"fixes\":[")
        for (i, f) in page.fixes.enumerated() {
            if i > 0 { w.raw(",") }
            ViewerJSON.write(f, into: &w)
        }
        w.raw("]")
        if let next = page.next {
            w.raw(",\"next_cursor\":")
            w.string(next.token)
        }
        w.raw("}")
        return APIResponse.json(.ok, w.bytes)
    }

    static func uuid(_ text: String?) -> UUID? {
        guard let text, text.utf8.count == 36 else { return nil }
        return UUID(uuidString: text)
    }

    static func notShared() -> Response {
        APIResponse.error(.notFound, "not_found", "no such device in this share")
    }

    static func badParameter(_ name: String, _ expected: String) -> Response {
        APIError.badParameter(name, expected).response
    }

    /// Items a list answer holds at most, and by default (issue 28: every list is bounded; a
    /// longer list is cut and says so with `"truncated": true`).
    static let maxList = 1_000

    /// The `limit` of a list answer: 1…`maxList`, default `maxList`; nil when it is not.
    static func listLimit(_ params: Parameters) -> Int? {
        guard let text = params["limit"] else { return maxList }
        guard let n = Int(text), (1...maxList).contains(n) else { return nil }
        return n
    }
}
