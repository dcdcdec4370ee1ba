/// The SDK's configuration. Every field has a default; `configure(_:)` may be
/// called at any time and takes effect from the next fix (LC-8).
public struct BeekonConfig: Sendable, Hashable, Codable {
    /// Gate and power preset; explicit fields below override its values (FX-3).
    public var preset: Preset
    /// Overrides the preset's minimum time between admitted fixes; 0 disables the time condition.
    public var minTimeBetweenLocationsSeconds: Double?
    /// Overrides the preset's minimum distance between admitted fixes; 0 disables the distance condition.
    public var minDistanceBetweenLocationsMeters: Double?
    /// Uploads to your backend; nil is local-only mode (no network request at all).
    public var sync: SyncConfig?
    /// What to do once the device is stationary (FX-6); default `pause`.
    public var whenStationary: StationaryPolicy
    /// Radius the device must stay within to count as stationary; default 5, clamped to 5…1000 m.
    public var stationaryRadiusMeters: Double
    /// Seconds between `check_in` fixes under `pauseWithCheckIns`; default 900.
    public var checkInIntervalSeconds: Double
    /// Opt-in turn-aware admission: admit a fix before the time/distance conditions hold when
    /// the heading changed by more than this many degrees since the last admitted fix
    /// (nil, the default, keeps the SPEC gate unchanged).
    public var turnThresholdDegrees: Double?
    /// The minimum seconds between fixes that turn-aware admission still respects (default 5).
    public var turnMinTimeSeconds: Double
    /// Opt-in error-bounded admission (BY-9): every accepted raw fix lies within this many
    /// metres of the polyline through the stored fixes, at the fewest stored fixes; it then
    /// replaces the time, distance and turn conditions. Nil (the default) keeps the gate.
    public var maxDeviationMeters: Double?
    /// Under `maxDeviationMeters`: a fix this many seconds (fix time) after the last stored
    /// one is stored at once, bounding how long a fix is held (default 600).
    public var maxIntervalBetweenLocationsSeconds: Double
    /// Fill each fix's `activity` with the `ActivityClassifier` of the dependencies (BY-4);
    /// default false. A fix whose source set an activity keeps it.
    public var classifyActivity: Bool
    /// Heartbeat (BY-4): a fix at least every this many seconds of fix time even when the gate
    /// would reject it; nil (default) is off. Usually set by the foreground profile.
    public var heartbeatSeconds: Double?
    /// The profile applied while the app is in the foreground (BY-4); nil keeps the base values.
    public var foregroundProfile: LocationProfile?
    /// The profile applied while the app is in the background (BY-4); nil keeps the base values.
    public var backgroundProfile: LocationProfile?
    /// The diagnostic log's level (BY-6): entries below it are not kept. Default `info`.
    public var diagnosticLogLevel: DiagnosticLevel
    /// The diagnostic log's cap in entries (BY-6), oldest dropped first. Default 5000; 100…1000000.
    public var diagnosticLogCapacity: Int
    /// Switch the foreground/background profile from the app's lifecycle by itself (BY-4; iOS
    /// UIKit notifications, see `AppLifecycleRule`); default true. Off: the host calls
    /// `Beekon.setAppState(_:)`. Without a lifecycle source (macOS, Linux) it changes nothing.
    public var followsAppLifecycle: Bool

    /// Creates a configuration.
    public init(
        preset: Preset = .balanced,
        minTimeBetweenLocationsSeconds: Double? = nil,
        minDistanceBetweenLocationsMeters: Double? = nil,
        sync: SyncConfig? = nil,
        whenStationary: StationaryPolicy = .pause,
        stationaryRadiusMeters: Double = 5,
        checkInIntervalSeconds: Double = 900,
        turnThresholdDegrees: Double? = nil,
        turnMinTimeSeconds: Double = 5,
        maxDeviationMeters: Double? = nil,
        maxIntervalBetweenLocationsSeconds: Double = 600,
        classifyActivity: Bool = false,
        heartbeatSeconds: Double? = nil,
        foregroundProfile: LocationProfile? = nil,
        backgroundProfile: LocationProfile? = nil,
        diagnosticLogLevel: DiagnosticLevel = .info,
        diagnosticLogCapacity: Int = 5000,
        followsAppLifecycle: Bool = true
    ) {
        self.followsAppLifecycle = followsAppLifecycle
        self.classifyActivity = classifyActivity
        self.heartbeatSeconds = heartbeatSeconds
        self.foregroundProfile = foregroundProfile
        self.backgroundProfile = backgroundProfile
        self.diagnosticLogLevel = diagnosticLogLevel
        self.diagnosticLogCapacity = diagnosticLogCapacity
        self.preset = preset
        self.minTimeBetweenLocationsSeconds = minTimeBetweenLocationsSeconds
        self.minDistanceBetweenLocationsMeters = minDistanceBetweenLocationsMeters
        self.sync = sync
        self.whenStationary = whenStationary
        self.stationaryRadiusMeters = stationaryRadiusMeters
        self.checkInIntervalSeconds = checkInIntervalSeconds
        self.turnThresholdDegrees = turnThresholdDegrees
        self.turnMinTimeSeconds = turnMinTimeSeconds
        self.maxDeviationMeters = maxDeviationMeters
        self.maxIntervalBetweenLocationsSeconds = maxIntervalBetweenLocationsSeconds
    }

    /// The persisted and config-file keys (the agent's `--config` reads exactly these).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case preset, minTimeBetweenLocationsSeconds, minDistanceBetweenLocationsMeters, sync, whenStationary
        case stationaryRadiusMeters, checkInIntervalSeconds, turnThresholdDegrees, turnMinTimeSeconds
        case maxDeviationMeters, maxIntervalBetweenLocationsSeconds
        case classifyActivity, heartbeatSeconds, foregroundProfile, backgroundProfile, diagnosticLogLevel, diagnosticLogCapacity
        case followsAppLifecycle
    }

    /// The names of the configuration's keys, in declaration order.
    package static var keyNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// The defaults, the one place they are written: the initialiser's default arguments.
    @usableFromInline static let defaults = BeekonConfig()

    /// Decodes a persisted configuration; fields added by later versions take their defaults.
    /// Under `ConfigDecoding.strict` (a config file) an unknown key or a `null` is an error.
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self, topLevel: true)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self.defaults
        self.init(
            preset: try c.decodeIfPresent(Preset.self, forKey: .preset) ?? d.preset,
            minTimeBetweenLocationsSeconds: try c.decodeIfPresent(Double.self, forKey: .minTimeBetweenLocationsSeconds),
            minDistanceBetweenLocationsMeters: try c.decodeIfPresent(Double.self, forKey: .minDistanceBetweenLocationsMeters),
            sync: try c.decodeIfPresent(SyncConfig.self, forKey: .sync),
            whenStationary: try c.decodeIfPresent(StationaryPolicy.self, forKey: .whenStationary) ?? d.whenStationary,
            stationaryRadiusMeters: try c.decodeIfPresent(Double.self, forKey: .stationaryRadiusMeters) ?? d.stationaryRadiusMeters,
            checkInIntervalSeconds: try c.decodeIfPresent(Double.self, forKey: .checkInIntervalSeconds) ?? d.checkInIntervalSeconds,
            turnThresholdDegrees: try c.decodeIfPresent(Double.self, forKey: .turnThresholdDegrees),
            turnMinTimeSeconds: try c.decodeIfPresent(Double.self, forKey: .turnMinTimeSeconds) ?? d.turnMinTimeSeconds,
            maxDeviationMeters: try c.decodeIfPresent(Double.self, forKey: .maxDeviationMeters),
            maxIntervalBetweenLocationsSeconds: try c.decodeIfPresent(
                Double.self, forKey: .maxIntervalBetweenLocationsSeconds) ?? d.maxIntervalBetweenLocationsSeconds,
            classifyActivity: try c.decodeIfPresent(Bool.self, forKey: .classifyActivity) ?? d.classifyActivity,
            heartbeatSeconds: try c.decodeIfPresent(Double.self, forKey: .heartbeatSeconds),
            foregroundProfile: try c.decodeIfPresent(LocationProfile.self, forKey: .foregroundProfile),
            backgroundProfile: try c.decodeIfPresent(LocationProfile.self, forKey: .backgroundProfile),
            diagnosticLogLevel: try c.decodeIfPresent(DiagnosticLevel.self, forKey: .diagnosticLogLevel) ?? d.diagnosticLogLevel,
            diagnosticLogCapacity: try c.decodeIfPresent(Int.self, forKey: .diagnosticLogCapacity) ?? d.diagnosticLogCapacity,
            followsAppLifecycle: try c.decodeIfPresent(Bool.self, forKey: .followsAppLifecycle) ?? d.followsAppLifecycle)
    }

    /// The time condition in effect: the explicit value, else the preset's.
    public var effectiveMinTimeSeconds: Double {
        minTimeBetweenLocationsSeconds ?? preset.minTimeBetweenLocationsSeconds
    }

    /// The distance condition in effect: the explicit value, else the preset's.
    public var effectiveMinDistanceMeters: Double {
        minDistanceBetweenLocationsMeters ?? preset.minDistanceBetweenLocationsMeters
    }

    /// Checks every field; throws `BeekonError.invalidConfiguration` naming the first bad one.
    public func validate() throws(BeekonError) {
        if let t = minTimeBetweenLocationsSeconds, !(t.isFinite && t >= 0) {
            throw .invalidConfiguration("minTimeBetweenLocationsSeconds must be a finite number ≥ 0 (got \(t))")
        }
        if let d = minDistanceBetweenLocationsMeters, !(d.isFinite && d >= 0) {
            throw .invalidConfiguration("minDistanceBetweenLocationsMeters must be a finite number ≥ 0 (got \(d))")
        }
        guard stationaryRadiusMeters.isFinite, stationaryRadiusMeters > 0 else {
            throw .invalidConfiguration("stationaryRadiusMeters must be a positive number (clamped to 5…1000)")
        }
        guard checkInIntervalSeconds.isFinite, checkInIntervalSeconds >= 1 else {
            throw .invalidConfiguration("checkInIntervalSeconds must be a number ≥ 1")
        }
        if let t = turnThresholdDegrees, !(t.isFinite && t > 0 && t < 180) {
            throw .invalidConfiguration("turnThresholdDegrees must be within (0, 180) degrees (got \(t))")
        }
        guard turnMinTimeSeconds.isFinite, turnMinTimeSeconds >= 0 else {
            throw .invalidConfiguration("turnMinTimeSeconds must be a number ≥ 0")
        }
        if let d = maxDeviationMeters, !(d.isFinite && d >= 1 && d <= 100_000) {
            throw .invalidConfiguration("maxDeviationMeters must be within 1…100000 metres (got \(d))")
        }
        guard maxIntervalBetweenLocationsSeconds.isFinite, maxIntervalBetweenLocationsSeconds >= 1 else {
            throw .invalidConfiguration("maxIntervalBetweenLocationsSeconds must be a number ≥ 1")
        }
        try validatePipeline()
        try sync?.validate()
    }
}
