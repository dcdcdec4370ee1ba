import Foundation

/// Why a body is not a valid schema-v1 envelope.
public enum WireDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not JSON (or not UTF-8), or the JSON has the wrong shape.
    case malformed(String)
    /// The JSON is well-formed but a field breaks the schema; `path` names it (e.g. `locations[3].latitude`).
    case invalid(path: String, reason: String)
    /// `schema_version` is not 1.
    case unsupportedSchemaVersion(Int)

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed JSON: \(why)"
        case .invalid(let path, let reason): return "\(path): \(reason)"
        case .unsupportedSchemaVersion(let v): return "schema_version \(v) is not supported (expected 1)"
        }
    }
}

extension WireEnvelope {
    /// Decodes and validates a schema-v1 body. Unknown fields are ignored
    /// (must-ignore); unknown `platform` values are accepted; every other
    /// field is checked for type, range and format.
    /// - Throws: `WireDecodingError.malformed` for bytes that are not JSON of the envelope's shape, `.invalid(path:reason:)` naming the first field that breaks schema v1, `.unsupportedSchemaVersion` for a `schema_version` other than 1.
    public static func decode(_ data: Data) throws(WireDecodingError) -> WireEnvelope {
        if let fast = EnvelopeFastReader.read(data) { return try validated(fast) }
        return try validated(generalRead(data))
    }

    /// `decode` without its fast path: what it cost before `EnvelopeFastReader` (benchmark W1).
    package static func decodeWithJSONDecoder(_ data: Data) throws(WireDecodingError) -> WireEnvelope {
        try validated(generalRead(data))
    }

    /// Checks a read body against schema v1 field by field.
    static func validated(_ raw: RawEnvelope) throws(WireDecodingError) -> WireEnvelope {
        guard raw.schema_version == 1 else { throw .unsupportedSchemaVersion(raw.schema_version) }
        if raw.nullExtras { throw .invalid(path: "extras", reason: "must be omitted when empty, not null") }
        if raw.device.nullModel { throw .invalid(path: "device.model", reason: "must be omitted when blank, not null") }
        if let extras = raw.extras, let problem = WireLimits.extrasProblem(extras) {
            throw .invalid(path: problem.path, reason: problem.reason)
        }
        let device = WireDevice(
            installId: try uuid(raw.device.install_id, "device.install_id"),
            platform: try nonEmpty(raw.device.platform, "device.platform", max: WireLimits.shortText),
            sdkVersion: try nonEmpty(raw.device.sdk_version, "device.sdk_version", max: WireLimits.shortText),
            model: try optional(raw.device.model.flatMap { $0.isEmpty ? nil : $0 }, "device.model", max: WireLimits.model),
            syncIntervalSeconds: raw.device.sync_interval_seconds?.seconds,
            checkInIntervalSeconds: raw.device.check_in_interval_seconds?.seconds
        )
        var locations: [WireLocation] = []
        locations.reserveCapacity(raw.locations.count)
        for (i, l) in raw.locations.enumerated() {
            locations.append(try location(l, path: "locations[\(i)]"))
        }
        var events: [WireGeofenceEvent] = []
        for (i, g) in raw.geofence_events.enumerated() {
            events.append(try geofenceEvent(g, path: "geofence_events[\(i)]"))
        }
        var envelope = WireEnvelope(
            batchId: try uuid(raw.batch_id, "batch_id"), sessionId: try uuid(raw.session_id, "session_id"),
            sentAt: try timestamp(raw.sent_at, "sent_at"), device: device, extras: raw.extras ?? [:],
            locations: locations, geofenceEvents: events)
        envelope.proximityEvents = try proximityEvents(raw.proximity_events)
        return envelope
    }

    /// Checks one read geofence event against schema v1; `p` names it in errors (e.g. `geofence_events[0]`).
    static func geofenceEvent(_ g: RawEvent, path p: String) throws(WireDecodingError) -> WireGeofenceEvent {
        guard let type = GeofenceTransition(rawValue: g.type) else {
            throw .invalid(path: "\(p).type", reason: "unknown value \"\(g.type)\"")
        }
        return WireGeofenceEvent(
            id: try uuid(g.id, "\(p).id"), geofenceId: try nonEmpty(g.geofence_id, "\(p).geofence_id", max: WireLimits.identifier),
            type: type, timestamp: try timestamp(g.timestamp, "\(p).timestamp"))
    }

    /// The general path: `JSONDecoder`, which decides and words every body the fast path
    /// (`EnvelopeFastReader`) leaves to it.
    static func generalRead(_ data: Data) throws(WireDecodingError) -> RawEnvelope {
        try WireMessageReader.read(RawEnvelope.self, data)
    }

    static func uuid(_ s: String, _ path: String) throws(WireDecodingError) -> UUID {
        guard s.utf8.count == 36, let u = UUID(wire: s) else { throw .invalid(path: path, reason: "not a UUID") }
        return u
    }

    static func timestamp(_ s: String, _ path: String) throws(WireDecodingError) -> WireTimestamp {
        guard let t = WireTimestamp(wire: s) else { throw .invalid(path: path, reason: "not YYYY-MM-DDTHH:MM:SS.mmmZ") }
        return t
    }

    /// `s` when it is 1...`max` code points (`WireLimits.length`, never grapheme clusters: issue 28).
    static func nonEmpty(_ s: String, _ path: String, max: Int) throws(WireDecodingError) -> String {
        guard !s.isEmpty, WireLimits.length(s) <= max else {
            throw .invalid(path: path, reason: "must be 1...\(WireLimits.describe(max))")
        }
        if let problem = WireLimits.textProblem(s) { throw .invalid(path: path, reason: problem) }
        return s
    }

    /// `s` (absent stays absent) when it is at most `max` code points.
    static func optional(_ s: String?, _ path: String, max: Int) throws(WireDecodingError) -> String? {
        guard let s else { return nil }
        guard WireLimits.length(s) <= max else { throw .invalid(path: path, reason: "must be at most \(WireLimits.describe(max))") }
        if let problem = WireLimits.textProblem(s) { throw .invalid(path: path, reason: problem) }
        return s
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ c: DecodingError.Context) -> String {
            let p = c.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return p.hasPrefix(".") ? String(p.dropFirst()) : (p.isEmpty ? "$" : p)
        }
        switch error {
        case .keyNotFound(let key, let c): return "\(c.codingPath.isEmpty ? "" : path(c) + ".")\(key.stringValue): missing"
        case .typeMismatch(_, let c): return "\(path(c)): wrong type"
        case .valueNotFound(_, let c): return "\(path(c)): null where a value is required"
        case .dataCorrupted(let c): return "\(path(c)): \(c.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

// Mirrors of the wire shape for JSONDecoder; validation happens above.
struct RawEnvelope: Decodable, Equatable {
    var schema_version: Int
    var batch_id: String
    var session_id: String
    var sent_at: String
    var device: RawDevice
    var extras: [String: String]?
    var locations: [RawLocation]
    var geofence_events: [RawEvent]
    var proximity_events: [RawProximityEvent]?
    /// `extras` sent as an explicit `null` (omitted when empty, never null).
    var nullExtras = false

    private enum CodingKeys: String, CodingKey {
        case schema_version, batch_id, session_id, sent_at, device, extras, locations, geofence_events, proximity_events
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema_version = try c.decode(Int.self, forKey: .schema_version)
        batch_id = try c.decode(String.self, forKey: .batch_id)
        session_id = try c.decode(String.self, forKey: .session_id)
        sent_at = try c.decode(String.self, forKey: .sent_at)
        device = try c.decode(RawDevice.self, forKey: .device)
        extras = try c.decodeIfPresent([String: String].self, forKey: .extras)
        locations = try c.decode([RawLocation].self, forKey: .locations)
        geofence_events = try c.decode([RawEvent].self, forKey: .geofence_events)
        // Optional, but an array when present: an explicit null is a producer bug (schema v1).
        if c.contains(.proximity_events), try c.decodeNil(forKey: .proximity_events) {
            throw DecodingError.typeMismatch(
                [RawProximityEvent].self,
                .init(codingPath: [CodingKeys.proximity_events], debugDescription: "proximity_events must be an array, not null"))
        }
        proximity_events = try c.decodeIfPresent([RawProximityEvent].self, forKey: .proximity_events)
        nullExtras = try c.contains(.extras) && c.decodeNil(forKey: .extras)
    }
}

struct RawDevice: Decodable, Equatable {
    var install_id: String
    var platform: String
    var sdk_version: String
    var model: String?
    var sync_interval_seconds: LenientSeconds?
    var check_in_interval_seconds: LenientSeconds?
    /// `model` sent as an explicit `null` (omitted when blank, never null).
    var nullModel = false

    private enum CodingKeys: String, CodingKey {
        case install_id, platform, sdk_version, model, sync_interval_seconds, check_in_interval_seconds
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        install_id = try c.decode(String.self, forKey: .install_id)
        platform = try c.decode(String.self, forKey: .platform)
        sdk_version = try c.decode(String.self, forKey: .sdk_version)
        model = try c.decodeIfPresent(String.self, forKey: .model)
        nullModel = try c.contains(.model) && c.decodeNil(forKey: .model)
        sync_interval_seconds = try c.decodeIfPresent(LenientSeconds.self, forKey: .sync_interval_seconds)
        check_in_interval_seconds = try c.decodeIfPresent(LenientSeconds.self, forKey: .check_in_interval_seconds)
    }
}

/// An optional interval field: a positive number of seconds (fractions truncated, at
/// most 10 years); any other value — a string, a negative, null — is ignored, never an error.
struct LenientSeconds: Decodable, Equatable {
    var seconds: Int?

    init(from decoder: any Decoder) throws {
        self.init(try? decoder.singleValueContainer().decode(Double.self))
    }

    /// The interval a number gives (nil: not a number, or out of range).
    init(_ value: Double?) {
        seconds = value.flatMap { $0.isFinite && $0 >= 1 && $0 <= 315_360_000 ? Int($0) : nil }
    }
}

struct RawEvent: Decodable, Equatable {
    var id: String
    var geofence_id: String
    var type: String
    var timestamp: String
}
