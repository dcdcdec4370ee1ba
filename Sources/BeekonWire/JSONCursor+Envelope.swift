import Foundation

/// The envelope's objects for the fast path: each known key read once with its type, unknown
/// keys skipped (must-ignore), and a missing required key, a `null` or a value of another
/// type gives up so that the general path decides and words the error.
extension JSONCursor {
    private static let envelopeKeys: [StaticString] = [
        "schema_version", "batch_id", "session_id", "sent_at", "device", "extras", "locations", "geofence_events",
        "proximity_events",
    ]
    private static let deviceKeys: [StaticString] = [
        "install_id", "platform", "sdk_version", "model", "sync_interval_seconds", "check_in_interval_seconds",
    ]
    private static let locationKeys: [StaticString] = [
        "id", "timestamp", "trigger", "motion", "is_mock", "latitude", "longitude", "accuracy", "speed", "bearing",
        "altitude", "activity", "quality", "privacy_zone", "locate_request_id",
    ]
    private static let eventKeys: [StaticString] = ["id", "geofence_id", "type", "timestamp"]
    private static let proximityKeys: [StaticString] = [
        "id", "region", "uuid", "major", "minor", "scanner", "type", "timestamp", "distance",
    ]

    /// Reads the key's index in `keys` (recording it), or skips an unknown key's value (nil).
    private mutating func known(_ key: UnsafeRawBufferPointer, in keys: [StaticString], _ seen: inout SeenKeys) throws(GiveUp) -> Int? {
        guard let i = key.index(in: keys) else {
            try seen.insertUnknown(key)
            try skipValue()
            return nil
        }
        try seen.insert(i)
        return i
    }

    /// The top-level object.
    mutating func envelope() throws(GiveUp) -> RawEnvelope {
        var seen = SeenKeys()
        var version = 0
        var batchID = ""
        var sessionID = ""
        var sentAt = ""
        var device: RawDevice?
        var extras: [String: String]?
        var locations: [RawLocation] = []
        var events: [RawEvent] = []
        var proximity: [RawProximityEvent]?
        try object { (c, key) throws(GiveUp) in
            switch try c.known(key, in: Self.envelopeKeys, &seen) {
            case 0: version = try c.int()
            case 1: batchID = try c.string()
            case 2: sessionID = try c.string()
            case 3: sentAt = try c.string()
            case 4: device = try c.device()
            case 5: extras = try c.extras()
            case 6: try c.array { (c) throws(GiveUp) in locations.append(try c.location()) }
            case 7: try c.array { (c) throws(GiveUp) in events.append(try c.event()) }
            case 8:
                var list: [RawProximityEvent] = []
                try c.array { (c) throws(GiveUp) in list.append(try c.proximityEvent()) }
                proximity = list
            default: break
            }
        }
        guard seen.contains(all: 0b1101_1111), let device else { throw GiveUp() }
        return RawEnvelope(
            schemaVersion: version, batchID: batchID, sessionID: sessionID, sentAt: sentAt, device: device,
            extras: extras, locations: locations, geofenceEvents: events, proximityEvents: proximity)
    }

    private mutating func device() throws(GiveUp) -> RawDevice {
        var seen = SeenKeys()
        var installID = ""
        var platform = ""
        var sdkVersion = ""
        var model: String?
        var syncInterval: LenientSeconds?
        var checkInInterval: LenientSeconds?
        try object { (c, key) throws(GiveUp) in
            switch try c.known(key, in: Self.deviceKeys, &seen) {
            case 0: installID = try c.string()
            case 1: platform = try c.string()
            case 2: sdkVersion = try c.string()
            case 3: model = try c.string()
            case 4: syncInterval = LenientSeconds(try c.double())
            case 5: checkInInterval = LenientSeconds(try c.double())
            default: break
            }
        }
        guard seen.contains(all: 0b111) else { throw GiveUp() }
        return RawDevice(
            installID: installID, platform: platform, sdkVersion: sdkVersion, model: model,
            syncInterval: syncInterval, checkInInterval: checkInInterval)
    }

    private mutating func extras() throws(GiveUp) -> [String: String] {
        var seen = SeenKeys()
        var extras: [String: String] = [:]
        try object { (c, key) throws(GiveUp) in
            try seen.insertUnknown(key)
            extras[String(decoding: key, as: UTF8.self)] = try c.string()
        }
        return extras
    }

    private mutating func location() throws(GiveUp) -> RawLocation {
        var seen = SeenKeys()
        var l = RawLocation(
            id: "", timestamp: "", trigger: "", motion: "", isMock: false, latitude: 0, longitude: 0)
        try object { (c, key) throws(GiveUp) in
            switch try c.known(key, in: Self.locationKeys, &seen) {
            case 0: l.id = try c.string()
            case 1: l.timestamp = try c.string()
            case 2: l.trigger = try c.string()
            case 3: l.motion = try c.string()
            case 4: l.is_mock = try c.bool()
            case 5: l.latitude = try c.double()
            case 6: l.longitude = try c.double()
            case 7: l.accuracy = try c.double()
            case 8: l.speed = try c.double()
            case 9: l.bearing = try c.double()
            case 10: l.altitude = try c.double()
            case 11: l.activity = try c.string()
            case 12: l.quality = try c.string()
            case 13: l.privacy_zone = try c.string()
            case 14: l.locate_request_id = try c.string()
            default: break
            }
        }
        guard seen.contains(all: 0b111_1111) else { throw GiveUp() }
        return l
    }

    private mutating func event() throws(GiveUp) -> RawEvent {
        var seen = SeenKeys()
        var e = RawEvent(id: "", geofence_id: "", type: "", timestamp: "")
        try object { (c, key) throws(GiveUp) in
            switch try c.known(key, in: Self.eventKeys, &seen) {
            case 0: e.id = try c.string()
            case 1: e.geofence_id = try c.string()
            case 2: e.type = try c.string()
            case 3: e.timestamp = try c.string()
            default: break
            }
        }
        guard seen.contains(all: 0b1111) else { throw GiveUp() }
        return e
    }

    private mutating func proximityEvent() throws(GiveUp) -> RawProximityEvent {
        var seen = SeenKeys()
        var e = RawProximityEvent(id: "", region: "", uuid: "", scanner: "", type: "", timestamp: "")
        try object { (c, key) throws(GiveUp) in
            switch try c.known(key, in: Self.proximityKeys, &seen) {
            case 0: e.id = try c.string()
            case 1: e.region = try c.string()
            case 2: e.uuid = try c.string()
            case 3: e.major = try c.int()
            case 4: e.minor = try c.int()
            case 5: e.scanner = try c.string()
            case 6: e.type = try c.string()
            case 7: e.timestamp = try c.string()
            case 8: e.distance = try c.double()
            default: break
            }
        }
        guard seen.contains(all: 0b1110_0111) else { throw GiveUp() }
        return e
    }
}

// Memberwise initialisers for the fast path (the types' own `init(from:)` hides Swift's).
extension RawEnvelope {
    init(
        schemaVersion: Int, batchID: String, sessionID: String, sentAt: String, device: RawDevice,
        extras: [String: String]?, locations: [RawLocation], geofenceEvents: [RawEvent], proximityEvents: [RawProximityEvent]?
    ) {
        schema_version = schemaVersion
        batch_id = batchID
        session_id = sessionID
        sent_at = sentAt
        self.device = device
        self.extras = extras
        self.locations = locations
        geofence_events = geofenceEvents
        proximity_events = proximityEvents
    }
}

extension RawDevice {
    init(
        installID: String, platform: String, sdkVersion: String, model: String?, syncInterval: LenientSeconds?,
        checkInInterval: LenientSeconds?
    ) {
        install_id = installID
        self.platform = platform
        sdk_version = sdkVersion
        self.model = model
        sync_interval_seconds = syncInterval
        check_in_interval_seconds = checkInInterval
    }
}

extension RawLocation {
    init(id: String, timestamp: String, trigger: String, motion: String, isMock: Bool, latitude: Double, longitude: Double) {
        self.id = id
        self.timestamp = timestamp
        self.trigger = trigger
        self.motion = motion
        is_mock = isMock
        self.latitude = latitude
        self.longitude = longitude
    }
}

extension RawProximityEvent {
    init(id: String, region: String, uuid: String, scanner: String, type: String, timestamp: String) {
        self.id = id
        self.region = region
        self.uuid = uuid
        self.scanner = scanner
        self.type = type
        self.timestamp = timestamp
    }
}
