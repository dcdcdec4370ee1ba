import Foundation

/// A stored fix as a viewer sees it (SPEC BY-3, issue 31): the read API's `/fixes` items and
/// `last_fix`, the live stream's `fix` event and a locate request's `fix`. Written as the
/// schema-v1 location object followed by `install_id`, `session_id`, `batch_id` and `received_at`.
public struct WireViewerFix: Hashable, Sendable {
    /// The fix as it arrived (at a share's precision when the viewer's share coarsens).
    public var location: WireLocation
    /// Its session and device.
    public var sessionId: UUID, installId: UUID
    /// The batch that first delivered it.
    public var batchId: UUID
    /// When the server received that batch.
    public var receivedAt: WireTimestamp

    /// Creates a viewer fix.
    public init(location: WireLocation, sessionId: UUID, installId: UUID, batchId: UUID, receivedAt: WireTimestamp) {
        self.location = location
        self.sessionId = sessionId
        self.installId = installId
        self.batchId = batchId
        self.receivedAt = receivedAt
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 420)
        w.write(self)
        return Data(w.bytes)
    }

    /// Reads a fix object; unknown members are ignored, the location is validated as in an upload.
    /// - Throws: `WireDecodingError` when the body is not a fix object or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireViewerFix {
        let raw = try WireMessageReader.read(RawViewerFix.self, data)
        return WireViewerFix(
            location: try WireEnvelope.location(raw.location, path: "$"), sessionId: try WireEnvelope.uuid(raw.session_id, "session_id"),
            installId: try WireEnvelope.uuid(raw.install_id, "install_id"), batchId: try WireEnvelope.uuid(raw.batch_id, "batch_id"),
            receivedAt: try WireEnvelope.timestamp(raw.received_at, "received_at"))
    }
}

/// A stored geofence event as a viewer sees it: the live stream's `geofence_event` event. Written
/// as the schema-v1 event object followed by `install_id`, `session_id`, `batch_id` and `received_at`.
public struct WireViewerGeofenceEvent: Hashable, Sendable {
    /// The event as it arrived.
    public var event: WireGeofenceEvent
    /// Its device and session.
    public var installId: UUID, sessionId: UUID
    /// The batch that first delivered it.
    public var batchId: UUID
    /// When the server received that batch.
    public var receivedAt: WireTimestamp

    /// Creates a viewer geofence event.
    public init(event: WireGeofenceEvent, installId: UUID, sessionId: UUID, batchId: UUID, receivedAt: WireTimestamp) {
        self.event = event
        self.installId = installId
        self.sessionId = sessionId
        self.batchId = batchId
        self.receivedAt = receivedAt
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 320)
        w.write(self)
        return Data(w.bytes)
    }

    /// Reads a geofence event object; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireViewerGeofenceEvent {
        struct Raw: Decodable {
            var install_id: String
            var session_id: String
            var batch_id: String
            var received_at: String
        }
        let event = try WireMessageReader.read(RawEvent.self, data)
        let raw = try WireMessageReader.read(Raw.self, data)
        return WireViewerGeofenceEvent(
            event: try WireEnvelope.geofenceEvent(event, path: "$"), installId: try WireEnvelope.uuid(raw.install_id, "install_id"),
            sessionId: try WireEnvelope.uuid(raw.session_id, "session_id"), batchId: try WireEnvelope.uuid(raw.batch_id, "batch_id"),
            receivedAt: try WireEnvelope.timestamp(raw.received_at, "received_at"))
    }
}

/// A device's reporting state (SPEC BY-8): `live` (a fresh fix), `delayed` (in contact, the
/// position is old) or `silent` (no contact).
public enum WireDeviceStatus: String, Hashable, Sendable, CaseIterable {
    /// Its newest fix is at most twice its reporting interval old.
    case live
    /// Not live, but it made contact within twice its reporting interval.
    case delayed
    /// No contact for more than twice its reporting interval.
    case silent
}

/// The live stream's `device` event: a device's reporting state changed. Written
/// `{"install_id","status","last_contact_at","last_fix_at","paused_since","expected_interval_seconds","at"}`;
/// `last_fix_at` is left out for a device that never stored a fix, `paused_since` for a device
/// that is not paused.
public struct WireDeviceStatusEvent: Hashable, Sendable {
    /// The device.
    public var installId: UUID
    /// Its new state.
    public var status: WireDeviceStatus
    /// When the server last received a batch from it.
    public var lastContactAt: WireTimestamp
    /// Its newest fix time; nil when it never stored one.
    public var lastFixAt: WireTimestamp?
    /// Set when the device declared a reporting interval and is silent past it: its app stopped
    /// sharing, since its last contact. A viewer shows "paused since …", not a stale position.
    public var pausedSince: WireTimestamp?
    /// The reporting interval the state was judged against, in seconds.
    public var expectedIntervalSeconds: Int
    /// When the state was judged.
    public var at: WireTimestamp

    /// Creates a status event.
    public init(
        installId: UUID, status: WireDeviceStatus, lastContactAt: WireTimestamp, lastFixAt: WireTimestamp?,
        pausedSince: WireTimestamp? = nil, expectedIntervalSeconds: Int, at: WireTimestamp
    ) {
        self.installId = installId
        self.status = status
        self.lastContactAt = lastContactAt
        self.lastFixAt = lastFixAt
        self.pausedSince = pausedSince
        self.expectedIntervalSeconds = expectedIntervalSeconds
        self.at = at
    }

    /// The JSON bytes.
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 200)
        w.raw("{\"install_id\":")
        w.string(installId.wireString)
        w.raw(",\"status\":")
        w.string(status.rawValue)
        w.raw(",\"last_contact_at\":")
        w.string(lastContactAt.description)
        if let lastFixAt {
            w.raw(",\"last_fix_at\":")
            w.string(lastFixAt.description)
        }
        if let pausedSince {
            w.raw(",\"paused_since\":")
            w.string(pausedSince.description)
        }
        w.raw(",\"expected_interval_seconds\":")
        w.number(Double(expectedIntervalSeconds))
        w.raw(",\"at\":")
        w.string(at.description)
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads a status event; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireDeviceStatusEvent {
        struct Raw: Decodable {
            var install_id: String
            var status: String
            var last_contact_at: String
            var last_fix_at: String?
            var paused_since: String?
            var expected_interval_seconds: Int
            var at: String
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        guard let status = WireDeviceStatus(rawValue: raw.status) else {
            throw .invalid(path: "status", reason: "unknown value \"\(raw.status)\"")
        }
        guard raw.expected_interval_seconds >= 1 else { throw .invalid(path: "expected_interval_seconds", reason: "must be at least 1") }
        return WireDeviceStatusEvent(
            installId: try WireEnvelope.uuid(raw.install_id, "install_id"), status: status,
            lastContactAt: try WireEnvelope.timestamp(raw.last_contact_at, "last_contact_at"),
            lastFixAt: try raw.last_fix_at.map { s throws(WireDecodingError) in try WireEnvelope.timestamp(s, "last_fix_at") },
            pausedSince: try raw.paused_since.map { s throws(WireDecodingError) in try WireEnvelope.timestamp(s, "paused_since") },
            expectedIntervalSeconds: raw.expected_interval_seconds, at: try WireEnvelope.timestamp(raw.at, "at"))
    }
}

/// A locate request as viewers see it (SPEC BY-2): the live stream's `locate` event, and (with
/// its answering `fix` appended by the server) the locate API's answers. Written with every
/// member present in this order, an absent value as `null`.
public struct WireLocateRequestState: Hashable, Sendable {
    /// Where a request is in its lifecycle.
    public enum State: String, Hashable, Sendable, CaseIterable {
        /// Created; no device has fetched it yet.
        case pending
        /// The push service accepted a silent push for the device.
        case pushed
        /// Handed to the device (command channel or an ingest answer).
        case delivered
        /// The device uploaded a fix carrying the request id.
        case answered
        /// The device declined, with its reason.
        case refused
        /// No answer before the expiry.
        case expired
    }

    /// The request id.
    public var id: UUID
    /// The device asked.
    public var installId: UUID
    /// Its state.
    public var state: State
    /// Who asked (`admin` or a share id).
    public var requestedBy: String
    /// When it was made and when it expires unanswered.
    public var createdAt: WireTimestamp, expiresAt: WireTimestamp
    /// When a push was accepted, the device fetched it, and it finished (answered, refused, expired).
    public var pushedAt: WireTimestamp?, deliveredAt: WireTimestamp?, finishedAt: WireTimestamp?
    /// The device's refusal reason.
    public var reason: String?
    /// Why the last push attempt failed.
    public var pushError: String?
    /// The answering fix, and a fix that answered after it finished.
    public var fixId: UUID?, lateFixId: UUID?

    /// Creates a request state.
    public init(
        id: UUID, installId: UUID, state: State, requestedBy: String, createdAt: WireTimestamp, expiresAt: WireTimestamp,
        pushedAt: WireTimestamp? = nil, deliveredAt: WireTimestamp? = nil, finishedAt: WireTimestamp? = nil, reason: String? = nil,
        pushError: String? = nil, fixId: UUID? = nil, lateFixId: UUID? = nil
    ) {
        self.id = id
        self.installId = installId
        self.state = state
        self.requestedBy = requestedBy
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.pushedAt = pushedAt
        self.deliveredAt = deliveredAt
        self.finishedAt = finishedAt
        self.reason = reason
        self.pushError = pushError
        self.fixId = fixId
        self.lateFixId = lateFixId
    }

    /// The JSON bytes (the live event: no `fix` member).
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 400)
        w.write(self)
        return Data(w.bytes)
    }

    /// Reads a request state; unknown members (such as the API's `fix`) are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or a field breaks it.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireLocateRequestState {
        struct Raw: Decodable {
            var id: String
            var install_id: String
            var state: String
            var requested_by: String
            var created_at: String
            var expires_at: String
            var pushed_at: String?
            var delivered_at: String?
            var finished_at: String?
            var reason: String?
            var push_error: String?
            var fix_id: String?
            var late_fix_id: String?
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        guard let state = State(rawValue: raw.state) else { throw .invalid(path: "state", reason: "unknown value \"\(raw.state)\"") }
        func time(_ s: String?, _ path: String) throws(WireDecodingError) -> WireTimestamp? {
            guard let s else { return nil }
            return try WireEnvelope.timestamp(s, path)
        }
        func uuid(_ s: String?, _ path: String) throws(WireDecodingError) -> UUID? {
            guard let s else { return nil }
            return try WireEnvelope.uuid(s, path)
        }
        return WireLocateRequestState(
            id: try WireEnvelope.uuid(raw.id, "id"), installId: try WireEnvelope.uuid(raw.install_id, "install_id"), state: state,
            requestedBy: raw.requested_by, createdAt: try WireEnvelope.timestamp(raw.created_at, "created_at"),
            expiresAt: try WireEnvelope.timestamp(raw.expires_at, "expires_at"), pushedAt: try time(raw.pushed_at, "pushed_at"),
            deliveredAt: try time(raw.delivered_at, "delivered_at"), finishedAt: try time(raw.finished_at, "finished_at"),
            reason: raw.reason, pushError: raw.push_error, fixId: try uuid(raw.fix_id, "fix_id"),
            lateFixId: try uuid(raw.late_fix_id, "late_fix_id"))
    }
}

/// The live stream's `reset` event: the viewer's `Last-Event-ID` cannot be served (pruned by
/// retention, or newer than anything stored); the stream continues from `head`, its SSE id.
/// Written `{"reason","head"}`.
public struct WireLiveReset: Hashable, Sendable {
    /// Why the cursor was reset.
    public enum Reason: String, Hashable, Sendable, CaseIterable {
        /// The requested events were deleted by retention.
        case beyondRetention = "beyond_retention"
        /// The requested id is newer than anything stored.
        case unknownEventId = "unknown_event_id"
    }

    /// Why.
    public var reason: Reason
    /// The newest event id; the stream resumes after it. Nil on a share's stream, whose ids
    /// are opaque (the reset's own `id:` line is where it resumes): a share does not learn how
    /// many events the server has.
    public var head: Int64?

    /// Creates a reset.
    public init(reason: Reason, head: Int64?) {
        self.reason = reason
        self.head = head
    }

    /// The JSON bytes (`head` left out when nil).
    public func encoded() -> Data {
        var w = WireJSONWriter(capacity: 64)
        w.raw("{\"reason\":")
        w.string(reason.rawValue)
        if let head {
            w.raw(",\"head\":")
            w.raw(String(head))
        }
        w.raw("}")
        return Data(w.bytes)
    }

    /// Reads a reset; unknown members are ignored.
    /// - Throws: `WireDecodingError` when the body is not this shape or the reason is unknown.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireLiveReset {
        struct Raw: Decodable {
            var reason: String
            var head: Int64?
        }
        let raw = try WireMessageReader.read(Raw.self, data)
        guard let reason = Reason(rawValue: raw.reason) else { throw .invalid(path: "reason", reason: "unknown value \"\(raw.reason)\"") }
        return WireLiveReset(reason: reason, head: raw.head)
    }
}

/// One event of the live stream (`GET /v1/live`, SSE): its `event:` name selects the type of its
/// `data:`. The server writes each with the type's own writer; a viewer reads it with
/// ``decode(event:data:)``.
public enum WireLiveEvent: Hashable, Sendable {
    /// `fix`: a fix was stored.
    case fix(WireViewerFix)
    /// `geofence_event`: a geofence event was stored.
    case geofenceEvent(WireViewerGeofenceEvent)
    /// `device`: a device's reporting state changed.
    case device(WireDeviceStatusEvent)
    /// `locate`: a locate request was created or moved in its lifecycle.
    case locate(WireLocateRequestState)
    /// `reset`: the requested cursor could not be served.
    case reset(WireLiveReset)

    /// The SSE `event:` names, in the order of the cases.
    public static let names = ["fix", "geofence_event", "device", "locate", "reset"]

    /// The SSE `event:` name.
    public var name: String {
        switch self {
        case .fix: return "fix"
        case .geofenceEvent: return "geofence_event"
        case .device: return "device"
        case .locate: return "locate"
        case .reset: return "reset"
        }
    }

    /// The SSE `data:` bytes.
    public func encoded() -> Data {
        switch self {
        case .fix(let v): return v.encoded()
        case .geofenceEvent(let v): return v.encoded()
        case .device(let v): return v.encoded()
        case .locate(let v): return v.encoded()
        case .reset(let v): return v.encoded()
        }
    }

    /// Reads the `data:` of an event named `event`; nil for a name this version does not know
    /// (must-ignore: a newer server may add kinds).
    /// - Throws: `WireDecodingError` when the data does not fit its event's type.
    public static func decode(event: String, data: Data) throws(WireDecodingError) -> WireLiveEvent? {
        switch event {
        case "fix": return .fix(try WireViewerFix.decode(data))
        case "geofence_event": return .geofenceEvent(try WireViewerGeofenceEvent.decode(data))
        case "device": return .device(try WireDeviceStatusEvent.decode(data))
        case "locate": return .locate(try WireLocateRequestState.decode(data))
        case "reset": return .reset(try WireLiveReset.decode(data))
        default: return nil
        }
    }
}

extension WireJSONWriter {
    /// Appends a viewer fix object.
    public mutating func write(_ f: WireViewerFix) {
        write(f.location) { w in
            w.member("install_id", string: f.installId.wireString)
            w.member("session_id", string: f.sessionId.wireString)
            w.member("batch_id", string: f.batchId.wireString)
            w.member("received_at", string: f.receivedAt.description)
        }
    }

    /// Appends a viewer geofence event object.
    public mutating func write(_ g: WireViewerGeofenceEvent) {
        write(g.event) { w in
            w.member("install_id", string: g.installId.wireString)
            w.member("session_id", string: g.sessionId.wireString)
            w.member("batch_id", string: g.batchId.wireString)
            w.member("received_at", string: g.receivedAt.description)
        }
    }

    /// Appends a locate request state; `members` appends further `,"key":value` members before it
    /// closes (the locate API's `fix`).
    public mutating func write(_ s: WireLocateRequestState, members: (inout WireJSONWriter) -> Void = { _ in }) {
        raw("{\"id\":")
        string(s.id.wireString)
        raw(",\"install_id\":")
        string(s.installId.wireString)
        raw(",\"state\":")
        string(s.state.rawValue)
        raw(",\"requested_by\":")
        string(s.requestedBy)
        raw(",\"created_at\":")
        string(s.createdAt.description)
        raw(",\"expires_at\":")
        string(s.expiresAt.description)
        for (key, value) in [("pushed_at", s.pushedAt), ("delivered_at", s.deliveredAt), ("finished_at", s.finishedAt)] {
            nullable(key, value?.description)
        }
        nullable("reason", s.reason)
        nullable("push_error", s.pushError)
        nullable("fix_id", s.fixId?.wireString)
        nullable("late_fix_id", s.lateFixId?.wireString)
        members(&self)
        raw("}")
    }

    /// Appends `,"key":"value"`, or `,"key":null` when `value` is nil.
    private mutating func nullable(_ key: String, _ value: String?) {
        raw(",\"")
        raw(key)
        raw("\":")
        if let value { string(value) } else { raw("null") }
    }
}

/// The wire shape of a viewer fix for `JSONDecoder`: the location's members and the context.
struct RawViewerFix: Decodable {
    var location: RawLocation
    var install_id: String
    var session_id: String
    var batch_id: String
    var received_at: String

    private enum CodingKeys: String, CodingKey {
        case install_id, session_id, batch_id, received_at
    }

    init(from decoder: any Decoder) throws {
        location = try RawLocation(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        install_id = try c.decode(String.self, forKey: .install_id)
        session_id = try c.decode(String.self, forKey: .session_id)
        batch_id = try c.decode(String.self, forKey: .batch_id)
        received_at = try c.decode(String.self, forKey: .received_at)
    }
}
