import Foundation

/// One beacon proximity transition as it travels in schema v1 (`proximity_events[]`, SPEC BY-5):
/// an optional, must-ignore addition to the envelope; receivers dedupe it by `id`.
public struct WireProximityEvent: Hashable, Sendable {
    /// `enter` or `exit`.
    public enum Transition: String, Sendable, CaseIterable {
        /// The smoothed distance stayed within the enter distance for the dwell time.
        case enter
        /// The smoothed distance stayed beyond the exit distance, or the beacon fell silent.
        case exit
    }

    /// Unique per event (UUIDv7); the receiver's dedupe key.
    public var id: UUID
    /// The app's beacon region identifier (1…100 code points).
    public var region: String
    /// The beacon's 16-byte identifier in UUID form.
    public var uuid: UUID
    /// The beacon's major, when its frame has one (0…65535).
    public var major: Int?
    /// The beacon's minor, when its frame has one (0…65535).
    public var minor: Int?
    /// The scanner that heard the beacon (1…100 code points).
    public var scanner: String
    /// Enter or exit.
    public var type: Transition
    /// When the transition completed.
    public var timestamp: WireTimestamp
    /// The smoothed distance in metres; nil for an exit by silence.
    public var distance: Double?

    /// Creates a wire proximity event.
    public init(
        id: UUID, region: String, uuid: UUID, major: Int? = nil, minor: Int? = nil, scanner: String, type: Transition,
        timestamp: WireTimestamp, distance: Double? = nil
    ) {
        self.id = id
        self.region = region
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.scanner = scanner
        self.type = type
        self.timestamp = timestamp
        self.distance = distance
    }
}

extension WireJSONWriter {
    /// Appends a proximity event object; `members` appends further `,"key":value` members before it closes.
    public mutating func write(_ p: WireProximityEvent, members: (inout WireJSONWriter) -> Void = { _ in }) {
        raw("{\"id\":")
        string(p.id.wireString)
        raw(",\"region\":")
        string(p.region)
        raw(",\"uuid\":")
        string(p.uuid.wireString)
        if let major = p.major {
            raw(",\"major\":")
            raw(String(major))
        }
        if let minor = p.minor {
            raw(",\"minor\":")
            raw(String(minor))
        }
        raw(",\"scanner\":")
        string(p.scanner)
        raw(",\"type\":")
        string(p.type.rawValue)
        raw(",\"timestamp\":")
        string(p.timestamp.description)
        if let d = p.distance, d.isFinite {
            raw(",\"distance\":")
            number(d)
        }
        members(&self)
        raw("}")
    }
}

extension WireJSONWriter {
    /// Appends `,"proximity_events":[…]` unless `events` is empty (an optional addition: omitted when empty).
    mutating func writeProximityEvents(_ events: [WireProximityEvent]) {
        guard !events.isEmpty else { return }
        raw(",\"proximity_events\":[")
        for (i, p) in events.enumerated() {
            if i > 0 { raw(",") }
            write(p)
        }
        raw("]")
    }
}

extension WireEnvelope {
    /// Validates `proximity_events[]` (absent: none).
    static func proximityEvents(_ raw: [RawProximityEvent]?) throws(WireDecodingError) -> [WireProximityEvent] {
        var out: [WireProximityEvent] = []
        for (i, e) in (raw ?? []).enumerated() {
            let p = "proximity_events[\(i)]"
            if let name = e.nullOptionals.first { throw .invalid(path: "\(p).\(name)", reason: "must be omitted when absent, not null") }
            guard let type = WireProximityEvent.Transition(rawValue: e.type) else {
                throw .invalid(path: "\(p).type", reason: "unknown value \"\(e.type)\"")
            }
            for (name, value) in [("major", e.major), ("minor", e.minor)] {
                if let v = value, !(0...65_535).contains(v) { throw .invalid(path: "\(p).\(name)", reason: "must be within 0...65535") }
            }
            if let d = e.distance, !(d.isFinite && d >= 0) { throw .invalid(path: "\(p).distance", reason: "must be a finite number >= 0") }
            out.append(
                WireProximityEvent(
                    id: try uuid(e.id, "\(p).id"), region: try nonEmpty(e.region, "\(p).region", max: WireLimits.identifier),
                    uuid: try uuid(e.uuid, "\(p).uuid"), major: e.major, minor: e.minor,
                    scanner: try nonEmpty(e.scanner, "\(p).scanner", max: WireLimits.identifier), type: type,
                    timestamp: try timestamp(e.timestamp, "\(p).timestamp"), distance: e.distance))
        }
        return out
    }
}

/// The wire shape of one proximity event for JSONDecoder; validated by `WireEnvelope.proximityEvents`.
struct RawProximityEvent: Decodable, Equatable {
    var id: String
    var region: String
    var uuid: String
    var major: Int?
    var minor: Int?
    var scanner: String
    var type: String
    var timestamp: String
    var distance: Double?
    /// Optional fields sent as an explicit `null` (schema v1 omits an absent optional).
    var nullOptionals: [String] = []

    private enum CodingKeys: String, CodingKey {
        case id, region, uuid, major, minor, scanner, type, timestamp, distance
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        region = try c.decode(String.self, forKey: .region)
        uuid = try c.decode(String.self, forKey: .uuid)
        major = try c.decodeIfPresent(Int.self, forKey: .major)
        minor = try c.decodeIfPresent(Int.self, forKey: .minor)
        scanner = try c.decode(String.self, forKey: .scanner)
        type = try c.decode(String.self, forKey: .type)
        timestamp = try c.decode(String.self, forKey: .timestamp)
        distance = try c.decodeIfPresent(Double.self, forKey: .distance)
        for key in [CodingKeys.major, .minor, .distance] where c.contains(key) {
            if try c.decodeNil(forKey: key) { nullOptionals.append(key.stringValue) }
        }
    }
}
