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
    /// The share behind the viewer (nil: an admin key or auth off): it reads no other share's id.
    var shareId: String? = nil
    /// Each device's own rules (issue 52: a circle's view, each member's sharing for their
    /// devices); a device without an entry gets `rules`. Nil: `rules` for every device.
    var deviceRules: [UUID: ShareScope]? = nil

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

    /// This scope as it applies to one device's fixes and events: that device's own rules
    /// (``deviceRules``) in place of `rules`, so every check below is the one implementation.
    func applying(to installId: UUID) -> ViewerScope {
        guard let own = deviceRules?[installId] else { return self }
        var copy = self
        copy.rules = own
        copy.deviceRules = nil
        return copy
    }

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
        switch event.kind {
        case .device: return rules.showsContact
        case .locate where rules.limitsTime:
            guard rules.admits(millis: event.millis, nowMillis: nowMillis),
                let state = try? WireLocateRequestState.decode(Data(event.payload.utf8))
            else { return false }
            return seesLocateRequest(createdAtMillis: state.createdAt.millis, nowMillis: nowMillis)
        default: return rules.admits(millis: event.millis, nowMillis: nowMillis)
        }
    }

    /// A stored fix as this viewer may see it: nil outside its devices or window, else ``shown(_:)``.
    func visible(_ fix: StoredFix, nowMillis: Int64) -> StoredFix? {
        guard sees(fix.installId) else { return nil }
        guard rules.admits(millis: fix.location.timestamp.millis, nowMillis: nowMillis) else { return nil }
        return shown(fix)
    }

    /// The coarsening this viewer's precision asks for (nil: full precision).
    var coarsening: Coarsening? { rules.coarsening }

    /// Whether a fix's or event's `received_at` and `batch_id` are withheld: they tell when the
    /// device was in contact (a batch id is a UUIDv7, its time), which a share limited in time
    /// does not see (``ShareScope/showsContact``) — a fix taken at 18:59 and received at 21:00
    /// told an hours share of 21:00. Withheld, `received_at` is the fix's or event's own time and
    /// `batch_id` the nil UUID, so that every viewer reads the same shape.
    var withholdsReceipt: Bool { !rules.showsContact }

    /// The batch id a viewer that does not see contact gets.
    static let withheldBatch = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Whether the names a device sends are withheld (issue 50): geofence ids, a beacon's region,
    /// uuid, major and minor, the scanner's name and privacy-zone ids name a place or a person
    /// (`office-bldg-7-floor-3`, "Anna's iPhone") and reveal a position finer than any precision
    /// (the server does not know a fence's or a zone's radius, and a beacon is metres away), so a
    /// share with a precision reads ``withheldName`` (or no value) for each of them.
    var withholdsNames: Bool { precisionMeters != nil }

    /// What a withheld name reads.
    static let withheldName = "withheld"

    /// A fix as this viewer sees it: coarsened when its precision asks (its privacy zone's id
    /// then left out, ``withholdsNames``), its receipt withheld when ``withholdsReceipt``. The
    /// one place a fix is narrowed for a viewer.
    func shown(_ fix: StoredFix) -> StoredFix {
        var f = coarsening?.fix(fix) ?? fix
        if withholdsNames { f.location.privacyZone = nil }
        if withholdsReceipt { (f.receivedAt, f.batchId) = (f.location.timestamp, Self.withheldBatch) }
        return f
    }

    /// A beacon proximity event as this viewer sees it: its distance (a position relative to a
    /// fixed beacon) at the precision, the beacon's and the scanner's names withheld
    /// (``withholdsNames``), its receipt withheld when ``withholdsReceipt``.
    func shown(_ stored: StoredProximityEvent) -> StoredProximityEvent {
        var s = stored
        if let coarsening { s.event.distance = s.event.distance.map(coarsening.multiple) }
        if withholdsNames {
            (s.event.region, s.event.scanner) = (Self.withheldName, Self.withheldName)
            (s.event.uuid, s.event.major, s.event.minor) = (Self.withheldBatch, nil, nil)
        }
        if withholdsReceipt { (s.receivedAt, s.batchId) = (s.event.timestamp, Self.withheldBatch) }
        return s
    }

    /// Who asked for a locate request, as this viewer reads it: a share reads `share` for
    /// another share's request, never its id (issue 50); its own id and `admin` stay.
    func requester(_ requestedBy: String) -> String {
        guard let shareId, requestedBy != "admin", requestedBy != shareId else { return requestedBy }
        return "share"
    }

    /// Whether this viewer sees a locate request made at `createdAtMillis` at all: a share
    /// limited in time sees nothing of a request made outside its hours or window (issue 50).
    func seesLocateRequest(createdAtMillis: Int64, nowMillis: Int64) -> Bool {
        !rules.limitsTime || rules.admits(millis: createdAtMillis, nowMillis: nowMillis)
    }

    /// A fix's JSON (as ``ViewerJSON`` renders it) as this viewer sees it (``shown(_:)``); "{}"
    /// when it cannot be read and the viewer needs it narrowed, so that a payload that cannot be
    /// read never reaches a narrowed viewer whole.
    func fixPayload(_ json: String) -> String {
        guard coarsening != nil || withholdsReceipt else { return json }
        return ViewerJSON.readFix(json).map { ViewerJSON.fix(shown($0)) } ?? "{}"
    }

    /// The event's JSON as this viewer may see it: a `fix` as ``fixPayload(_:)``, a
    /// `geofence_event` with its receipt withheld when ``withholdsReceipt`` and its geofence id
    /// when ``withholdsNames``, a `locate` with its requester as ``requester(_:)`` says. The
    /// `device` kind carries no position, name or receipt and is sent as stored (a locate step's
    /// time is judged by ``admits(_:nowMillis:)``).
    func payload(of event: LiveEvent) -> String {
        switch event.kind {
        case .fix: return fixPayload(event.payload)
        case .geofenceEvent where withholdsReceipt || withholdsNames:
            guard var g = try? WireViewerGeofenceEvent.decode(Data(event.payload.utf8)) else { return "{}" }
            if withholdsReceipt { (g.receivedAt, g.batchId) = (g.event.timestamp, Self.withheldBatch) }
            if withholdsNames { g.event.geofenceId = Self.withheldName }
            return String(decoding: g.encoded(), as: UTF8.self)
        case .locate where shareId != nil:
            guard var state = try? WireLocateRequestState.decode(Data(event.payload.utf8)) else { return "{}" }
            state.requestedBy = requester(state.requestedBy)
            return String(decoding: state.encoded(), as: UTF8.self)
        default: return event.payload
        }
    }

    /// Whether this viewer's frame of an event of `kind` differs from the stored payload's
    /// rendering for other viewers: the key part of ``LiveFrameCache``.
    func rendering(of kind: LiveEvent.Kind) -> LiveFrameCache.Rendering {
        switch kind {
        case .fix: return .init(meters: precisionMeters, withholdsReceipt: withholdsReceipt)
        case .geofenceEvent: return .init(meters: nil, withholdsReceipt: withholdsReceipt, withholdsNames: withholdsNames)
        case .locate: return .init(meters: nil, withholdsReceipt: false, share: shareId)
        case .device: return .init(meters: nil, withholdsReceipt: false)
        }
    }
}
