import BeekonWire
import Foundation
import Hummingbird

extension ReadController {
    /// `GET /v1/devices/{install_id}/proximity-events?from=&to=&limit=`: the device's beacon
    /// proximity events (BY-5) in (timestamp, id) order, each a schema-v1 proximity event
    /// followed by `session_id`, `batch_id` and `received_at`.
    func proximityEvents(_ installId: UUID, _ params: Parameters, _ scope: ViewerScope = .everything) async throws(StoreError) -> Response {
        var query = ProximityQuery(installId: installId)
        if let bad = window(params, scope, into: &query) { return bad }
        // One more than the page: it only tells that the answer is cut (issue 28).
        let pageSize = query.limit
        query.limit += 1
        let nowMs = WireTimestamp(now()).millis
        var events = try await admittedProximityEvents(query, scope, nowMillis: nowMs)
        let truncated = events.count > pageSize
        if truncated { events.removeLast(events.count - pageSize) }
        // A distance to a fixed beacon is a position (XR-4), the beacon's and scanner's names
        // name a place and a person (issue 50), the receipt tells of contact: as for fixes.
        events = events.map(scope.shown)
        var w = WireJSONWriter(capacity: 128 + events.count * 300)
        w.raw("{\"install_id\":")
        w.string(installId.wireString)
        w.raw(",\"proximity_events\":[")
        for (i, s) in events.enumerated() {
            if i > 0 { w.raw(",") }
            ViewerJSON.write(s, into: &w)
        }
        w.raw("]")
        if truncated { w.raw(",\"truncated\":true") }
        w.raw("}")
        return APIResponse.json(.ok, w.bytes)
    }

    /// Up to `query.limit` proximity events that `scope` admits, in (timestamp, id) order. A
    /// share limited to hours of the day reads on past the events it may not see, so that
    /// `truncated` counts only what it may see (cut before the filter, it told an hours share
    /// that events happened at night). Reads at most ``hoursScanLimit`` events.
    func admittedProximityEvents(
        _ query: ProximityQuery, _ scope: ViewerScope, nowMillis: Int64
    ) async throws(StoreError) -> [StoredProximityEvent] {
        guard scope.rules.filtersEachFix else {
            return try await store.proximityEvents(query).filter { scope.admits(millis: $0.event.timestamp.millis, nowMillis: nowMillis) }
        }
        var out: [StoredProximityEvent] = []
        var read = query
        var seen = Set<UUID>()
        var scanned = 0
        while out.count < query.limit, scanned < Self.hoursScanLimit {
            let page = try await store.proximityEvents(read)
            scanned += page.count
            for e in page where seen.insert(e.event.id).inserted && scope.admits(millis: e.event.timestamp.millis, nowMillis: nowMillis) {
                out.append(e)
            }
            guard page.count == read.limit, let first = page.first, let last = page.last else { break }
            // Go on from the last event's time (the events at that time are read again and
            // skipped by id); a page all at one time is read again twice as large.
            if first.event.timestamp == last.event.timestamp { read.limit *= 2 } else { read.from = last.event.timestamp }
        }
        return Array(out.prefix(query.limit))
    }

    /// Sets `query`'s `from` and `to` (ISO 8601) and `limit` (1…maxPage) from the query string,
    /// each optional; `from` is raised to the start of `scope`'s history window (a share sees
    /// nothing older). Returns the 400 naming a bad parameter, or nil.
    func window(_ params: Parameters, _ scope: ViewerScope, into query: inout some WindowedQuery) -> Response? {
        var from: WireTimestamp?
        var to: WireTimestamp?
        var limit: Int?
        if let text = params["from"] {
            guard let t = WireTimestamp(iso8601: String(text)) else { return Self.badParameter("from", "an ISO 8601 time") }
            from = t
        }
        if let text = params["to"] {
            guard let t = WireTimestamp(iso8601: String(text)) else { return Self.badParameter("to", "an ISO 8601 time") }
            to = t
        }
        if let text = params["limit"] {
            guard let n = Int(text), (1...Self.maxPage).contains(n) else { return Self.badParameter("limit", "1...\(Self.maxPage)") }
            limit = n
        }
        if let start = scope.windowStart(nowMillis: WireTimestamp(now()).millis) {
            from = WireTimestamp(millis: max(from?.millis ?? .min, start))
        }
        query.from = from
        query.to = to
        query.limit = limit ?? query.limit
        return nil
    }
}

/// A read with a time range and a page size (fixes, proximity events), filled from the query
/// string by ``ReadController/window(_:_:into:)``.
protocol WindowedQuery {
    /// Time range: inclusive start.
    var from: WireTimestamp? { get set }
    /// Time range: exclusive end.
    var to: WireTimestamp? { get set }
    /// Page size.
    var limit: Int { get set }
}

extension FixQuery: WindowedQuery {}
extension ProximityQuery: WindowedQuery {}
