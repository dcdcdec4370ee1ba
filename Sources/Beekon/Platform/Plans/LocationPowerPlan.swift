/// How the CoreLocation provider is set up for a power mode: the live-updates
/// configuration (iOS 17+/macOS 14+) and the `CLLocationManager` settings (iOS 15–16,
/// macOS 13). Platform-neutral, so the preset map is unit-tested on Linux; the glue
/// assigns each value to its one CoreLocation property.
package struct LocationPowerPlan: Sendable, Hashable {
    /// `CLLocationUpdate.LiveConfiguration`, platform-neutral.
    package enum LiveConfiguration: Sendable, Hashable {
        /// `.default`
        case `default`
        /// `.automotiveNavigation`
        case automotiveNavigation
    }

    /// `CLActivityType`, platform-neutral.
    package enum ActivityType: Sendable, Hashable {
        /// `.other`
        case other
        /// `.automotiveNavigation`
        case automotiveNavigation
    }

    /// The `kCLLocationAccuracy…` constant to use, platform-neutral.
    package enum Accuracy: Sendable, Hashable {
        /// `kCLLocationAccuracyBestForNavigation`
        case bestForNavigation
        /// `kCLLocationAccuracyBest`
        case best
        /// `kCLLocationAccuracyHundredMeters`
        case hundredMeters
        /// `kCLLocationAccuracyThreeKilometers`
        case threeKilometers
    }

    /// The live-updates configuration; nil when continuous updates stop (stationary pause:
    /// only the significant-change monitor keeps running).
    package var liveConfiguration: LiveConfiguration?
    /// `desiredAccuracy`.
    package var desiredAccuracy: Accuracy
    /// `distanceFilter` in metres; nil is `kCLDistanceFilterNone` (the SDK's gate filters).
    package var distanceFilterMeters: Double?
    /// `activityType`.
    package var activityType: ActivityType
    /// `pausesLocationUpdatesAutomatically`: always false, the SDK's stationary detector decides.
    package var pausesAutomatically = false
    /// `allowsBackgroundLocationUpdates`: always true while tracking.
    package var allowsBackgroundUpdates = true
    /// `showsBackgroundLocationIndicator`: always true (the user sees the blue indicator).
    package var showsBackgroundIndicator = true
    /// Whether continuous updates run (`startUpdatingLocation` / live updates).
    package var continuousUpdates: Bool { liveConfiguration != nil }
    /// The significant-location-change monitor runs in every mode, on every OS version:
    /// it is what relaunches a terminated app.
    package var significantChanges = true

    /// The plan for `mode`: Saver and Balanced → `.default`, Precision → `.automotiveNavigation`
    /// (the reference's preset map); paused → no continuous updates.
    package init(mode: PowerMode) {
        switch mode {
        case .high:
            liveConfiguration = .automotiveNavigation
            desiredAccuracy = .bestForNavigation
            distanceFilterMeters = nil
            activityType = .automotiveNavigation
        case .balanced:
            liveConfiguration = .default
            desiredAccuracy = .best
            distanceFilterMeters = nil
            activityType = .other
        case .low:
            liveConfiguration = .default
            desiredAccuracy = .hundredMeters
            distanceFilterMeters = 50
            activityType = .other
        case .paused:
            liveConfiguration = nil
            desiredAccuracy = .threeKilometers
            distanceFilterMeters = nil
            activityType = .other
        }
    }
}
