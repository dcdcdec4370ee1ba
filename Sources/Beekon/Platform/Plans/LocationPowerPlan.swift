/// How the CoreLocation provider is set up for a power mode and a ``SourceTuning``: which
/// service runs, the live-updates configuration (iOS 17+/macOS 14+) and the
/// `CLLocationManager` settings. Platform-neutral, so the preset map is unit-tested on Linux;
/// the glue assigns each value to its one CoreLocation property.
///
/// What Apple's headers (iPhoneOS18.6.sdk) say the choices do:
/// - `distanceFilter` (`CLLocationManager.h`): "Specifies the minimum update distance in meters.
///   Client will not be notified of movements of less than the stated value, unless the accuracy
///   has improved." The filter is the gate's minimum distance (``SourceTuning``): a fix the gate
///   would drop never wakes the app. `CLLocationUpdate.liveUpdates(_:)` takes only a
///   `LiveConfiguration` (`.default`, `.automotiveNavigation`, `.otherNavigation`, `.fitness`,
///   `.airborne`) and has no distance filter, so a plan with a filter runs the standard service
///   (`startUpdatingLocation`) on iOS 17+ too; one without (a heartbeat wants every fix) runs live updates.
/// - `desiredAccuracy`: "To optimize power performance, be sure to specify an appropriate accuracy
///   for your usage scenario (eg, use a large accuracy value when only a coarse location is needed)."
/// - `pausesLocationUpdatesAutomatically`: "Specifies that location updates may automatically be
///   paused when possible." On for Saver, the coarse preset of the family app's background profile
///   (reference 004 keeps automatic pauses on there); Apple's delegate header says of the resume
///   "In the event that your application is terminated while suspended, you will not receive this
///   notification", so the provider itself resumes from the significant-change monitor and the
///   stationary wake region placed at the pause (``StationaryWakePlan/osPaused(latitude:longitude:radiusMeters:)``).
/// - `allowsBackgroundLocationUpdates`: "Setting this property to YES when UIBackgroundModes does not
///   include \"location\" is a fatal error." So it is true only when the bundle declares it
///   (``BackgroundModes``), in every mode, the paused one included.
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

    /// The `kCLLocationAccuracy…` constant to use, platform-neutral, finest first.
    package enum Accuracy: Sendable, Hashable, Comparable {
        /// `kCLLocationAccuracyBestForNavigation`
        case bestForNavigation
        /// `kCLLocationAccuracyBest`
        case best
        /// `kCLLocationAccuracyHundredMeters`
        case hundredMeters
        /// `kCLLocationAccuracyThreeKilometers`
        case threeKilometers
    }

    /// Which continuous service runs.
    package enum Service: Sendable, Hashable {
        /// None: only the significant-change monitor (and the stationary wake region).
        case none
        /// `CLLocationUpdate.liveUpdates(_:)` with this configuration (iOS 17+/macOS 14+).
        case liveUpdates(LiveConfiguration)
        /// `CLLocationManager.startUpdatingLocation()` with this plan's settings.
        case standard
    }

    /// The live-updates configuration of the mode; nil when continuous updates stop
    /// (stationary pause: only the significant-change monitor keeps running).
    package var liveConfiguration: LiveConfiguration?
    /// `desiredAccuracy`.
    package var desiredAccuracy: Accuracy
    /// `distanceFilter` in metres; nil is `kCLDistanceFilterNone`.
    package var distanceFilterMeters: Double?
    /// `activityType`.
    package var activityType: ActivityType
    /// `pausesLocationUpdatesAutomatically`: on for Saver only (see the type's notes).
    package var pausesAutomatically = false
    /// `allowsBackgroundLocationUpdates`: true only when `UIBackgroundModes` has `location`.
    package var allowsBackgroundUpdates: Bool
    /// `showsBackgroundLocationIndicator`: with background updates (the user sees the blue indicator).
    package var showsBackgroundIndicator: Bool
    /// Whether continuous updates run (`startUpdatingLocation` / live updates).
    package var continuousUpdates: Bool { liveConfiguration != nil }
    /// The significant-location-change monitor runs in every mode, on every OS version:
    /// it is what relaunches a terminated app.
    package var significantChanges = true

    /// The plan for `mode`: Saver and Balanced → `.default`, Precision → `.automotiveNavigation`
    /// (the reference's preset map); paused → no continuous updates. The distance filter is the
    /// tuning's; `backgroundLocationDeclared` is whether `UIBackgroundModes` lists `location`.
    package init(mode: PowerMode, tuning: SourceTuning = SourceTuning(), backgroundLocationDeclared: Bool = true) {
        allowsBackgroundUpdates = backgroundLocationDeclared
        showsBackgroundIndicator = backgroundLocationDeclared
        distanceFilterMeters = tuning.distanceFilterMeters
        activityType = .other
        switch mode {
        case .high:
            liveConfiguration = .automotiveNavigation
            desiredAccuracy = .bestForNavigation
            activityType = .automotiveNavigation
        case .balanced:
            liveConfiguration = .default
            desiredAccuracy = .best
        case .low:
            liveConfiguration = .default
            desiredAccuracy = .hundredMeters
            pausesAutomatically = true
        case .paused:
            liveConfiguration = nil
            desiredAccuracy = .threeKilometers
            distanceFilterMeters = nil
        }
    }

    /// The service to run: none when paused; the standard service where live updates cannot
    /// express the plan (a distance filter or automatic pauses) or do not exist (before iOS 17 /
    /// macOS 14); live updates otherwise.
    package func service(liveUpdatesAvailable: Bool) -> Service {
        guard let liveConfiguration else { return .none }
        if !liveUpdatesAvailable || distanceFilterMeters != nil || pausesAutomatically { return .standard }
        return .liveUpdates(liveConfiguration)
    }

    /// The `desiredAccuracy` while a one-shot request for `oneShot` is outstanding: the finer of
    /// the two. `requestLocation()` "will attempt to determine location with accuracy according to
    /// the desiredAccuracy property" (`CLLocationManager.h`), so a locate while paused (3 km)
    /// raises it for the request, and the plan's own value returns once it is answered.
    package func desiredAccuracy(oneShot: PowerMode?) -> Accuracy {
        guard let oneShot else { return desiredAccuracy }
        return min(desiredAccuracy, LocationPowerPlan(mode: oneShot == .paused ? .high : oneShot).desiredAccuracy)
    }

    /// Whether an outstanding `requestLocation()` must be asked again after applying this plan
    /// on the manager: "There can only be one outstanding location request and this method can not
    /// be used concurrently with startUpdatingLocation … Calling either of those methods will
    /// immediately cancel the location request. The method stopUpdatingLocation can be used to
    /// explicitly cancel the request." (`CLLocationManager.h`). A pause (stop) or a probe (start)
    /// during the wait cancels it: with the standard service running its updates answer the
    /// request; otherwise it is asked again.
    package func reissuesOneShot(pending: Bool, liveUpdatesAvailable: Bool) -> Bool {
        pending && service(liveUpdatesAvailable: liveUpdatesAvailable) != .standard
    }
}
