/// One named location profile (BY-4): a full gate, preset and stationary setting that
/// replaces the base configuration's values while its `AppState` is current. A field left
/// nil keeps the base configuration's value.
public struct LocationProfile: Sendable, Hashable, Codable {
    /// Gate and power preset.
    public var preset: Preset?
    /// Minimum seconds between admitted fixes.
    public var minTimeBetweenLocationsSeconds: Double?
    /// Minimum metres between admitted fixes.
    public var minDistanceBetweenLocationsMeters: Double?
    /// Stationary policy (FX-6).
    public var whenStationary: StationaryPolicy?
    /// Stationary radius in metres.
    public var stationaryRadiusMeters: Double?
    /// Seconds between check-ins under `pauseWithCheckIns`.
    public var checkInIntervalSeconds: Double?
    /// Heartbeat: at least one fix every this many seconds (fix time) even when the gate would
    /// reject it (a stationary device); the paused source is woken at this interval too.
    public var heartbeatSeconds: Double?

    /// Creates a profile; nil fields keep the base configuration's values.
    public init(
        preset: Preset? = nil, minTimeBetweenLocationsSeconds: Double? = nil, minDistanceBetweenLocationsMeters: Double? = nil,
        whenStationary: StationaryPolicy? = nil, stationaryRadiusMeters: Double? = nil, checkInIntervalSeconds: Double? = nil,
        heartbeatSeconds: Double? = nil
    ) {
        self.preset = preset
        self.minTimeBetweenLocationsSeconds = minTimeBetweenLocationsSeconds
        self.minDistanceBetweenLocationsMeters = minDistanceBetweenLocationsMeters
        self.whenStationary = whenStationary
        self.stationaryRadiusMeters = stationaryRadiusMeters
        self.checkInIntervalSeconds = checkInIntervalSeconds
        self.heartbeatSeconds = heartbeatSeconds
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case preset, minTimeBetweenLocationsSeconds, minDistanceBetweenLocationsMeters, whenStationary
        case stationaryRadiusMeters, checkInIntervalSeconds, heartbeatSeconds
    }

    /// Decodes a profile; every field is optional.
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            preset: try c.decodeIfPresent(Preset.self, forKey: .preset),
            minTimeBetweenLocationsSeconds: try c.decodeIfPresent(Double.self, forKey: .minTimeBetweenLocationsSeconds),
            minDistanceBetweenLocationsMeters: try c.decodeIfPresent(Double.self, forKey: .minDistanceBetweenLocationsMeters),
            whenStationary: try c.decodeIfPresent(StationaryPolicy.self, forKey: .whenStationary),
            stationaryRadiusMeters: try c.decodeIfPresent(Double.self, forKey: .stationaryRadiusMeters),
            checkInIntervalSeconds: try c.decodeIfPresent(Double.self, forKey: .checkInIntervalSeconds),
            heartbeatSeconds: try c.decodeIfPresent(Double.self, forKey: .heartbeatSeconds))
    }

    /// The field report's foreground profile: balanced, 20 s and 25 m, a fix at least every 30 s.
    public static let foreground = LocationProfile(
        preset: .balanced, minTimeBetweenLocationsSeconds: 20, minDistanceBetweenLocationsMeters: 25, heartbeatSeconds: 30)

    /// The field report's background profile: saver (coarse), 150 m, check-ins while stationary.
    public static let background = LocationProfile(
        preset: .saver, minTimeBetweenLocationsSeconds: 60, minDistanceBetweenLocationsMeters: 150,
        whenStationary: .pauseWithCheckIns)

    /// `base` with this profile's fields applied.
    package func applied(to base: BeekonConfig) -> BeekonConfig {
        var c = base
        if let v = preset { c.preset = v }
        if let v = minTimeBetweenLocationsSeconds { c.minTimeBetweenLocationsSeconds = v }
        if let v = minDistanceBetweenLocationsMeters { c.minDistanceBetweenLocationsMeters = v }
        if let v = whenStationary { c.whenStationary = v }
        if let v = stationaryRadiusMeters { c.stationaryRadiusMeters = v }
        if let v = checkInIntervalSeconds { c.checkInIntervalSeconds = v }
        if let v = heartbeatSeconds { c.heartbeatSeconds = v }
        return c
    }

    /// Throws `invalidConfiguration` naming the first bad field (`name` is the config key).
    func validate(_ name: String) throws(BeekonError) {
        for (key, value) in [
            ("minTimeBetweenLocationsSeconds", minTimeBetweenLocationsSeconds),
            ("minDistanceBetweenLocationsMeters", minDistanceBetweenLocationsMeters),
        ] {
            if let v = value, !(v.isFinite && v >= 0) { throw .invalidConfiguration("\(name).\(key) must be a finite number ≥ 0") }
        }
        if let v = stationaryRadiusMeters, !(v.isFinite && v > 0) {
            throw .invalidConfiguration("\(name).stationaryRadiusMeters must be positive")
        }
        if let v = checkInIntervalSeconds, !(v.isFinite && v >= 1) {
            throw .invalidConfiguration("\(name).checkInIntervalSeconds must be ≥ 1")
        }
        if let v = heartbeatSeconds, !(v.isFinite && v >= 1) { throw .invalidConfiguration("\(name).heartbeatSeconds must be ≥ 1") }
    }
}
