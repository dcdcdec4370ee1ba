import BeekonWire
import Foundation

/// A circle as one viewer sees it (issue 52): each member with their state — `sharing`,
/// `paused` (their setting, their device refused a wake-up with `sharing_off`, or their app
/// stopped: every device silent past the interval it declared, `app_stopped`) or
/// `outside_hours` — and, while sharing, each device's newest fix, staleness and contact at
/// the precision and in the hours the member allows, and the state of the circle's newest
/// wake-up request to it. A paused member shows no position and no dot, only since when.
struct CircleView: Sendable {
    let read: ReadController
    let circles: any CircleStore

    /// One device as the viewer sees it.
    private struct Device {
        var id: UUID
        var status: DeviceStatus?
        var lastContact: Int64?
        var fix: StoredFix?
        var request: String?
        var pausedSince: Int64?
        /// `sharing_off` or `app_stopped`, with `pausedSince`.
        var pausedReason: String?
    }

    /// The view's JSON; `wakes` (what opening the view just asked of each device) when it woke the circle.
    func render(
        _ detail: CircleDetail, caller: CircleCaller, nowMillis nowMs: Int64, wakes: [UUID: WakeOutcome]? = nil
    ) async throws(StoreError) -> [UInt8] {
        let wanted = Set(detail.members.flatMap(\.devices))
        var summaries: [UUID: DeviceSummary] = [:]
        if !wanted.isEmpty {
            for d in try await read.store.devices() where wanted.contains(d.installId) { summaries[d.installId] = d }
        }
        let requester = CircleService.requester(detail.circle.id)
        var w = WireJSONWriter(capacity: 1024)
        w.raw("{\"id\":")
        w.string(detail.circle.id)
        w.raw(",\"name\":")
        w.string(detail.circle.name)
        w.raw(",\"created_at\":")
        w.string(WireTimestamp(millis: detail.circle.createdMillis).description)
        w.raw(",\"role\":")
        if let me = caller.person.flatMap(detail.member) { w.string(me.role.rawValue) } else { w.raw("null") }
        w.raw(",\"members\":[")
        for (i, m) in detail.members.enumerated() {
            if i > 0 { w.raw(",") }
            let own = m.person == caller.person
            let rules = own ? ShareScope(live: true) : m.sharing.scope
            let scope = ViewerScope(devices: nil, rules: rules, shareId: requester)
            var state = "sharing"
            var reason: String?
            var since: Int64?
            var devices: [Device] = []
            if !own, let paused = m.sharing.pausedMillis {
                (state, reason, since) = ("paused", "paused", paused)
            } else if !own, rules.hours != nil, !rules.admits(millis: nowMs, nowMillis: nowMs) {
                state = "outside_hours"
            } else {
                for id in m.devices {
                    devices.append(try await device(id, summaries[id], scope, requester: requester, nowMillis: nowMs))
                }
                // Every device of theirs said its sharing is off (and sent nothing since), or stopped
                // reporting (its app no longer runs): paused, not a stale dot.
                if !own, !devices.isEmpty, devices.allSatisfy({ $0.pausedSince != nil }) {
                    let why = devices.contains { $0.pausedReason == "sharing_off" } ? "sharing_off" : "app_stopped"
                    (state, reason, since) = ("paused", why, devices.compactMap(\.pausedSince).max())
                }
            }
            w.raw("{\"person\":")
            w.string(m.person)
            w.raw(",\"display_name\":")
            if let name = m.displayName { w.string(name) } else { w.raw("null") }
            w.raw(",\"role\":")
            w.string(m.role.rawValue)
            w.raw(",\"you\":")
            w.raw(own ? "true" : "false")
            w.raw(",\"joined_at\":")
            w.string(WireTimestamp(millis: m.joinedMillis).description)
            w.raw(",\"sharing\":")
            Self.write(m.sharing, into: &w)
            w.raw(",\"state\":")
            w.string(state)
            w.raw(",\"paused_reason\":")
            if let reason { w.string(reason) } else { w.raw("null") }
            w.raw(",\"paused_since\":")
            if let since { w.string(WireTimestamp(millis: since).description) } else { w.raw("null") }
            let shown = state == "paused" ? [] : devices
            w.raw(",\"last_seen_at\":")
            if let seen = shown.compactMap({ $0.fix?.location.timestamp.millis }).max() {
                w.string(WireTimestamp(millis: seen).description)
            } else {
                w.raw("null")
            }
            w.raw(",\"devices\":[")
            for (j, d) in shown.enumerated() {
                if j > 0 { w.raw(",") }
                w.raw("{\"install_id\":")
                w.string(d.id.wireString)
                w.raw(",\"status\":")
                if let s = d.status { w.string(s.rawValue) } else { w.raw("null") }
                w.raw(",\"last_contact_at\":")
                if let c = d.lastContact { w.string(WireTimestamp(millis: c).description) } else { w.raw("null") }
                w.raw(",\"last_fix_at\":")
                if let f = d.fix { w.string(f.location.timestamp.description) } else { w.raw("null") }
                w.raw(",\"fix\":")
                if let f = d.fix { ViewerJSON.write(f, into: &w) } else { w.raw("null") }
                w.raw(",\"request\":")
                w.raw(d.request ?? "null")
                if let wakes {
                    w.raw(",\"wake\":")
                    w.string((wakes[d.id] ?? .notAsked).rawValue)
                }
                w.raw("}")
            }
            w.raw("]}")
        }
        w.raw("]}")
        return w.bytes
    }

    private func device(
        _ id: UUID, _ summary: DeviceSummary?, _ scope: ViewerScope, requester: String, nowMillis: Int64
    ) async throws(StoreError) -> Device {
        var d = Device(id: id)
        if let summary {
            d.fix = try await read.lastVisibleFix(summary, scope, nowMillis: nowMillis)
            if scope.rules.showsContact {
                d.lastContact = summary.lastReceivedAt.millis
                d.status = read.monitor?.status(of: summary, nowMillis: nowMillis)
                // Silent past the interval it declared: its app stopped sharing (docs/nudges.md).
                if let since = DeviceTimes(summary).pausedSinceMillis(nowMillis: nowMillis) {
                    (d.pausedSince, d.pausedReason) = (since, "app_stopped")
                }
            }
        }
        if var r = try await circles.latestLocateRequest(installId: id, requestedBy: requester),
            scope.seesLocateRequest(createdAtMillis: r.createdAtMillis, nowMillis: nowMillis)
        {
            if scope.rules.limitsTime { r.narrow(to: scope, nowMillis: nowMillis) }
            if r.state == .refused, r.reason == "sharing_off", let at = r.finishedAtMillis, (d.fix?.location.timestamp.millis ?? .min) < at
            {
                (d.pausedSince, d.pausedReason) = (at, "sharing_off")
                d.fix = nil  // never a position for a paused device
            }
            d.request = r.json(includeFix: false, for: scope)
        }
        return d
    }

    /// A member's sharing: `precision_m`, `hours`, `time_zone`, `paused`, `paused_at`.
    static func write(_ s: MemberSharing, into w: inout WireJSONWriter) {
        w.raw("{\"precision_m\":")
        if let p = s.precisionMeters { w.number(p) } else { w.raw("null") }
        w.raw(",\"hours\":")
        if let h = s.hours { w.string(h) } else { w.raw("null") }
        w.raw(",\"time_zone\":")
        if let z = s.timeZone { w.string(z) } else { w.raw("null") }
        w.raw(",\"paused\":")
        w.raw(s.pausedMillis == nil ? "false" : "true")
        w.raw(",\"paused_at\":")
        if let at = s.pausedMillis { w.string(WireTimestamp(millis: at).description) } else { w.raw("null") }
        w.raw("}")
    }
}
