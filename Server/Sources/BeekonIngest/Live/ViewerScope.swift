import BeekonWire
import Foundation

/// What one viewer may see: some or all devices, fixes from a time on, at a precision.
/// Admin keys (and auth off) see everything; a share sees what it grants.
struct ViewerScope: Sendable, Equatable {
    /// The devices visible; nil for all.
    var devices: Set<UUID>?
    /// How far back fix / event time may go, in seconds; nil for no limit.
    var historySeconds: Int?
    /// Coordinates are coarsened to this many metres; nil for full precision.
    var precisionMeters: Double?
    /// Whether the live stream is allowed.
    var live: Bool = true
    /// Whether locate requests may be made (for its devices).
    var locate: Bool = true

    /// Everything (admin keys, auth off).
    static let everything = ViewerScope(devices: nil, historySeconds: nil, precisionMeters: nil)

    /// The earliest fix time (Unix ms) visible at `nowMillis`; nil for no limit.
    func windowStart(nowMillis: Int64) -> Int64? {
        historySeconds.map { nowMillis - Int64($0) * 1000 }
    }

    /// Whether a device is visible.
    func sees(_ installId: UUID) -> Bool { devices?.contains(installId) ?? true }

    /// Narrows the devices to `requested` (a viewer's own filter).
    func narrowed(to requested: Set<UUID>?) -> ViewerScope {
        guard let requested else { return self }
        var copy = self
        copy.devices = devices.map { $0.intersection(requested) } ?? requested
        return copy
    }

    /// Whether an event is visible at `nowMillis`: its device, and (for fixes and
    /// geofence events) its time inside the history window.
    func admits(_ event: LiveEvent, nowMillis: Int64) -> Bool {
        guard sees(event.installId) else { return false }
        if event.kind != .device, event.kind != .locate, let start = windowStart(nowMillis: nowMillis), event.millis < start {
            return false
        }
        return true
    }

    /// A stored fix as this viewer may see it: nil outside its devices or window, coarsened when required.
    func visible(_ fix: StoredFix, nowMillis: Int64) -> StoredFix? {
        guard sees(fix.installId) else { return nil }
        if let start = windowStart(nowMillis: nowMillis), fix.location.timestamp.millis < start { return nil }
        return coarsening?.fix(fix) ?? fix
    }

    /// The coarsening this viewer's precision asks for (nil: full precision).
    var coarsening: Coarsening? { precisionMeters.map(Coarsening.init(meters:)) }

    /// The event's JSON as this viewer may see it: a `fix` coarsened when required (`ViewerJSON`).
    /// The other kinds carry no position (`geofence_event`, `device`, and `locate`, which is
    /// published without its fix) and are sent as stored.
    func payload(of event: LiveEvent) -> String {
        guard event.kind == .fix else { return event.payload }
        return ViewerJSON.fix(event.payload, coarsening: coarsening)
    }
}
