/// What a platform source is told beyond the power mode, so the OS delivers only
/// what the SDK keeps: the movement below which no fix is wanted, and where the device is
/// stationary. Derived from the effective configuration (the current profile applied) and
/// the stationary detector; the CoreLocation provider turns it into `distanceFilter`, the
/// service it runs and the stationary wake region (``LocationPowerPlan``, ``StationaryWakePlan``).
package struct SourceTuning: Sendable, Hashable {
    /// The stationary position (the detector's anchor) and the detector's radius.
    package struct Stationary: Sendable, Hashable {
        /// Latitude, degrees.
        package var latitude: Double
        /// Longitude, degrees.
        package var longitude: Double
        /// The detector's radius, metres (already clamped to 5…1000).
        package var radiusMeters: Double

        /// Creates a position.
        package init(latitude: Double, longitude: Double, radiusMeters: Double) {
            self.latitude = latitude
            self.longitude = longitude
            self.radiusMeters = radiusMeters
        }
    }

    /// Movement below which the OS need not report a fix: the gate's minimum distance, which
    /// would drop such a fix anyway. Nil (every movement) when something needs the fixes the
    /// distance would drop: a heartbeat (a fix every interval, moving or not), turn-aware
    /// admission (a turn inside the distance) or error-bounded admission (every raw fix).
    package var distanceFilterMeters: Double?
    /// The stationary detector's radius, metres (for a wake region placed at CoreLocation's own pause).
    package var stationaryRadiusMeters: Double
    /// Where the device is stationary while the source is paused for it; nil otherwise.
    package var stationary: Stationary?

    /// Creates a tuning.
    package init(distanceFilterMeters: Double? = nil, stationaryRadiusMeters: Double = 5, stationary: Stationary? = nil) {
        self.distanceFilterMeters = distanceFilterMeters
        self.stationaryRadiusMeters = stationary?.radiusMeters ?? stationaryRadiusMeters
        self.stationary = stationary
    }

    /// The tuning for an effective configuration, with the stationary position if paused.
    /// `checkingDwell`: no fix came through the filter for the stationary dwell, so it is lifted
    /// until the next fix (the detector needs one to find the device still).
    package init(config: BeekonConfig, checkingDwell: Bool = false, stationary: Stationary? = nil) {
        let distance = config.effectiveMinDistanceMeters
        let needsEveryFix =
            checkingDwell || config.heartbeatSeconds != nil || config.turnThresholdDegrees != nil || config.maxDeviationMeters != nil
        self.init(
            distanceFilterMeters: !needsEveryFix && distance.isFinite && distance > 0 ? distance : nil,
            stationaryRadiusMeters: config.stationaryRadiusMeters, stationary: stationary)
    }
}

/// A location source that shapes what the OS delivers from a ``SourceTuning`` (the
/// CoreLocation provider). The SDK calls it before starting the source, before every
/// power-mode change, and whenever a configuration or profile switch changes the tuning.
package protocol SourceTuningObserver: Sendable {
    /// The tuning from now on.
    func tuningChanged(_ tuning: SourceTuning) async
}
