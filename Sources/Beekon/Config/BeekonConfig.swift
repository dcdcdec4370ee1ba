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

    /// Creates a configuration.
    public init(
        preset: Preset = .balanced,
        minTimeBetweenLocationsSeconds: Double? = nil,
        minDistanceBetweenLocationsMeters: Double? = nil,
        sync: SyncConfig? = nil
    ) {
        self.preset = preset
        self.minTimeBetweenLocationsSeconds = minTimeBetweenLocationsSeconds
        self.minDistanceBetweenLocationsMeters = minDistanceBetweenLocationsMeters
        self.sync = sync
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
        try sync?.validate()
    }
}
