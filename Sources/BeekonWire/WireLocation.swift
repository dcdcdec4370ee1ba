import Foundation

/// One fix as it travels in schema v1 (`locations[]`).
public struct WireLocation: Hashable, Sendable {
    /// Fix id (UUIDv7).
    public var id: UUID
    /// When the fix was recorded.
    public var timestamp: WireTimestamp
    /// Why the fix was recorded.
    public var trigger: Trigger
    /// Motion state at the time of the fix.
    public var motion: Motion
    /// Whether the OS flagged the fix as simulated.
    public var isMock: Bool
    /// Degrees, WGS 84.
    public var latitude: Double
    /// Degrees, WGS 84.
    public var longitude: Double
    /// Horizontal accuracy in metres, if reported.
    public var accuracy: Double?
    /// Speed in metres per second, if reported.
    public var speed: Double?
    /// Course in degrees [0, 360), if reported.
    public var bearing: Double?
    /// Altitude in metres, if reported.
    public var altitude: Double?
    /// Activity classification, if activity detection is on.
    public var activity: Activity?
    /// Quality flag; nil means the fix is good.
    public var quality: Quality?
    /// The privacy zone whose centre replaced this fix's position (`privacy_zone`, optional,
    /// must-ignore; SPEC BY-4). Omitted when nil.
    public var privacyZone: String?
    /// The locate request this fix answers (`locate_request_id`, optional, must-ignore for
    /// receivers that do not know it); nil for every other fix.
    public var locateRequestId: UUID? = nil

    /// Creates a wire location.
    public init(
        id: UUID, timestamp: WireTimestamp, trigger: Trigger = .interval, motion: Motion = .unknown,
        isMock: Bool = false, latitude: Double, longitude: Double, accuracy: Double? = nil,
        speed: Double? = nil, bearing: Double? = nil, altitude: Double? = nil,
        activity: Activity? = nil, quality: Quality? = nil, privacyZone: String? = nil
    ) {
        self.id = id
        self.timestamp = timestamp
        self.trigger = trigger
        self.motion = motion
        self.isMock = isMock
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.speed = speed
        self.bearing = bearing
        self.altitude = altitude
        self.activity = activity
        self.quality = quality
        self.privacyZone = privacyZone
    }
}

// The location message's codec, beside its type: what schema v1 writes (`WireJSONWriter`), what it
// reads (`RawLocation`, the mirror `JSONDecoder` fills) and how it validates (`WireEnvelope.location`).
// A new optional field is a property above plus a line in each of these; the fast reader
// (`JSONCursor+Envelope.swift`) is a deliberate second implementation, checked against this one.

extension WireJSONWriter {
    /// Appends a location object; `extra` fields (already-encoded JSON values) are appended last.
    public mutating func write(_ l: WireLocation, extra: [(String, String)] = []) {
        write(l) { $0.appendFields(extra) }
    }

    /// Appends a location object; `members` appends further `,"key":value` members before it closes
    /// (a receiver's own fields after the schema-v1 ones).
    public mutating func write(_ l: WireLocation, members: (inout WireJSONWriter) -> Void) {
        raw("{\"id\":")
        string(l.id.wireString)
        raw(",\"timestamp\":")
        string(l.timestamp.description)
        raw(",\"trigger\":")
        string(l.trigger.rawValue)
        raw(",\"motion\":")
        string(l.motion.rawValue)
        raw(",\"is_mock\":")
        raw(l.isMock ? "true" : "false")
        raw(",\"latitude\":")
        number(l.latitude)
        raw(",\"longitude\":")
        number(l.longitude)
        optionalNumber("accuracy", l.accuracy)
        optionalNumber("speed", l.speed)
        optionalNumber("bearing", l.bearing)
        optionalNumber("altitude", l.altitude)
        if let a = l.activity {
            raw(",\"activity\":")
            string(a.rawValue)
        }
        if let q = l.quality {
            raw(",\"quality\":")
            string(q.rawValue)
        }
        if let r = l.locateRequestId {
            raw(",\"locate_request_id\":")
            string(r.wireString)
        }
        if let z = l.privacyZone {
            raw(",\"privacy_zone\":")
            string(z)
        }
        members(&self)
        raw("}")
    }

    /// Appends `,"key":number` when `value` is present and finite (non-finite numbers are dropped).
    fileprivate mutating func optionalNumber(_ key: String, _ value: Double?) {
        guard let v = value, v.isFinite else { return }
        raw(",\"")
        raw(key)
        raw("\":")
        number(v)
    }
}

extension WireEnvelope {
    /// Checks one read location against schema v1; `p` names it in errors (e.g. `locations[3]`).
    static func location(_ l: RawLocation, path p: String) throws(WireDecodingError) -> WireLocation {
        if let name = l.nullOptionals.first { throw .invalid(path: "\(p).\(name)", reason: "must be omitted when absent, not null") }
        guard let trigger = Trigger(rawValue: l.trigger) else {
            throw .invalid(path: "\(p).trigger", reason: "unknown value \"\(l.trigger)\"")
        }
        guard let motion = Motion(rawValue: l.motion) else {
            throw .invalid(path: "\(p).motion", reason: "unknown value \"\(l.motion)\"")
        }
        guard l.latitude.isFinite, (-90...90).contains(l.latitude) else {
            throw .invalid(path: "\(p).latitude", reason: "must be within -90...90")
        }
        guard l.longitude.isFinite, (-180...180).contains(l.longitude) else {
            throw .invalid(path: "\(p).longitude", reason: "must be within -180...180")
        }
        for (name, value) in [("accuracy", l.accuracy), ("speed", l.speed), ("bearing", l.bearing), ("altitude", l.altitude)] {
            if let v = value, !v.isFinite { throw .invalid(path: "\(p).\(name)", reason: "must be finite") }
        }
        if let a = l.accuracy, a < 0 { throw .invalid(path: "\(p).accuracy", reason: "must not be negative") }
        if let b = l.bearing, !(0..<360).contains(b) { throw .invalid(path: "\(p).bearing", reason: "must be within [0, 360)") }
        var activity: Activity?
        if let a = l.activity {
            guard let v = Activity(rawValue: a) else { throw .invalid(path: "\(p).activity", reason: "unknown value \"\(a)\"") }
            activity = v
        }
        var quality: Quality?
        if let q = l.quality {
            guard let v = Quality(rawValue: q) else { throw .invalid(path: "\(p).quality", reason: "unknown value \"\(q)\"") }
            quality = v
        }
        var location = WireLocation(
            id: try uuid(l.id, "\(p).id"), timestamp: try timestamp(l.timestamp, "\(p).timestamp"),
            trigger: trigger, motion: motion, isMock: l.is_mock, latitude: l.latitude, longitude: l.longitude,
            accuracy: l.accuracy, speed: l.speed, bearing: l.bearing, altitude: l.altitude,
            activity: activity, quality: quality,
            privacyZone: try optional(l.privacy_zone, "\(p).privacy_zone", max: WireLimits.identifier))
        if let r = l.locate_request_id { location.locateRequestId = try uuid(r, "\(p).locate_request_id") }
        return location
    }
}

extension WireLocation: Decodable {
    /// Reads one schema-v1 location object — members it does not know are ignored — and
    /// validates it exactly as ``WireEnvelope/decode(_:)`` validates `locations[]` (the same code).
    /// Lets a receiver read a location nested in its own objects (a stored fix, a locate answer).
    /// - Throws: `DecodingError` for a missing or mistyped member, and `DecodingError.dataCorrupted`
    ///   with the ``WireDecodingError`` text for a value that breaks schema v1.
    public init(from decoder: any Decoder) throws {
        let raw = try RawLocation(from: decoder)
        let path = decoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        do {
            self = try WireEnvelope.location(raw, path: path.isEmpty ? "$" : String(path.drop { $0 == "." }))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }
}

struct RawLocation: Decodable, Equatable {
    var id: String
    var timestamp: String
    var trigger: String
    var motion: String
    var is_mock: Bool
    var latitude: Double
    var longitude: Double
    var accuracy: Double?
    var speed: Double?
    var bearing: Double?
    var altitude: Double?
    var activity: String?
    var quality: String?
    /// A string when present (schema v1), like every other optional field.
    var privacy_zone: String?
    var locate_request_id: String?
    /// Optional fields sent as an explicit `null`: schema v1 omits an absent optional,
    /// so a null is a producer bug the validator names (JSONDecoder alone reads it as absent).
    var nullOptionals: [String] = []

    private enum CodingKeys: String, CodingKey {
        case id, timestamp, trigger, motion, is_mock, latitude, longitude, accuracy, speed, bearing, altitude, activity, quality,
            privacy_zone, locate_request_id
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        timestamp = try c.decode(String.self, forKey: .timestamp)
        trigger = try c.decode(String.self, forKey: .trigger)
        motion = try c.decode(String.self, forKey: .motion)
        is_mock = try c.decode(Bool.self, forKey: .is_mock)
        latitude = try c.decode(Double.self, forKey: .latitude)
        longitude = try c.decode(Double.self, forKey: .longitude)
        accuracy = try c.decodeIfPresent(Double.self, forKey: .accuracy)
        speed = try c.decodeIfPresent(Double.self, forKey: .speed)
        bearing = try c.decodeIfPresent(Double.self, forKey: .bearing)
        altitude = try c.decodeIfPresent(Double.self, forKey: .altitude)
        activity = try c.decodeIfPresent(String.self, forKey: .activity)
        quality = try c.decodeIfPresent(String.self, forKey: .quality)
        privacy_zone = try c.decodeIfPresent(String.self, forKey: .privacy_zone)
        locate_request_id = try c.decodeIfPresent(String.self, forKey: .locate_request_id)
        for key in [CodingKeys.accuracy, .speed, .bearing, .altitude, .activity, .quality, .locate_request_id, .privacy_zone]
        where c.contains(key) {
            if try c.decodeNil(forKey: key) { nullOptionals.append(key.stringValue) }
        }
    }
}
