import BeekonWire
import Foundation

/// What one viewer may see: some or all devices, and what its share's scope admits
/// (`ShareScope`: history window, hours of the day, precision, live, locate).
/// Admin keys (and auth off) see everything; a share sees what it grants.
struct ViewerScope: Sendable, Equatable {
    /// The devices visible; nil for all.
    var devices: Set<UUID>?
    /// What the share admits (`ShareScope.everything` for admin keys and auth off).
    var rules: ShareScope

    /// Everything (admin keys, auth off).
    static let everything = ViewerScope(devices: nil, rules: .everything)

    /// How far back fix / event time may go, in seconds; nil for no limit.
    var historySeconds: Int? { rules.historySeconds }
    /// Coordinates are coarsened to this many metres; nil for full precision.
    var precisionMeters: Double? { rules.precisionMeters }
    /// Whether the live stream is allowed.
    var live: Bool { rules.live }
    /// Whether locate requests may be made (for its devices).
    var locate: Bool { rules.locate }

    /// The earliest fix time (Unix ms) visible at `nowMillis`; nil for no limit.
    func windowStart(nowMillis: Int64) -> Int64? { rules.windowStart(nowMillis: nowMillis) }

    /// Whether a fix or event taken at `millis` is visible at `nowMillis` (its device aside).
    func admits(millis: Int64, nowMillis: Int64) -> Bool { rules.admits(millis: millis, nowMillis: nowMillis) }

    /// Whether a device is visible.
    func sees(_ installId: UUID) -> Bool { devices?.contains(installId) ?? true }

    /// Narrows the devices to `requested` (a viewer's own filter).
    func narrowed(to requested: Set<UUID>?) -> ViewerScope {
        guard let requested else { return self }
        var copy = self
        copy.devices = devices.map { $0.intersection(requested) } ?? requested
        return copy
    }

    /// Whether an event is visible at `nowMillis`: its device, and its time admitted by the
    /// share's scope (history window, hours) — a fix, a geofence event, or a locate request's
    /// step (its time is the device's activity: delivered, answered) — while a `device` status
    /// change is contact, seen only by a share not limited in time (`ShareScope.showsContact`).
    func admits(_ event: LiveEvent, nowMillis: Int64) -> Bool {
        guard sees(event.installId) else { return false }
        return event.kind == .device ? rules.showsContact : rules.admits(millis: event.millis, nowMillis: nowMillis)
    }

    /// A stored fix as this viewer may see it: nil outside its devices or window, coarsened when required.
    func visible(_ fix: StoredFix, nowMillis: Int64) -> StoredFix? {
        guard sees(fix.installId) else { return nil }
        guard rules.admits(millis: fix.location.timestamp.millis, nowMillis: nowMillis) else { return nil }
        return coarsening?.fix(fix) ?? fix
    }

    /// The coarsening this viewer's precision asks for (nil: full precision).
    var coarsening: Coarsening? { rules.coarsening }

    /// The event's JSON as this viewer may see it: a `fix` coarsened when required (`ViewerJSON`).
    /// The other kinds carry no position (`geofence_event`, `device`, and `locate`, which is
    /// published without its fix) and are sent as stored.
    func payload(of event: LiveEvent) -> String {
        guard event.kind == .fix else { return event.payload }
        return ViewerJSON.fix(event.payload, coarsening: coarsening)
    }
}
