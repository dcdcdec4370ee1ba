import BeekonPrimitives

/// The stationary wake region (FX-6, BY-4): while the source is paused (the SDK's
/// stationary pause, or CoreLocation's automatic pause of a Saver plan) a circular OS region
/// around the stationary position is the suspended app's wake source; leaving it asks for a
/// fix, and that fix resumes tracking through the SDK's stationary detector.
///
/// - **Radius**: three times the stationary detector's radius, clamped to
///   ``minimumRadiusMeters`` … ``maximumRadiusMeters`` (100…300 m; 100 m with the default 5 m
///   radius). It never depends on the fences. More than twice the detector's radius, so a fix
///   at the region's edge is outside the detector's radius even with the tolerance it grants a
///   noisy fix (up to one radius), and the detector resumes movement at once; at most 300 m, so
///   the first fix after walking away comes within a few hundred metres, not at the
///   significant-change monitor's ≈ 500 m.
/// - **Kept apart from the fence pager**: its own identifier (``identifier``) and its own OS
///   slot (``RegionPaging`` pages fences into the other 19, its refresh region included).
/// - **Exit**: after the SDK's pause, a one-shot fix (`requestLocation()`); after an automatic
///   pause, the standard service again (Apple: after a pause "you will not receive" the resume
///   notification once suspended, so the app restarts it). A fix that arrives after an exit while
///   the SDK stays paused (still inside the detector's radius) re-centres the region on itself.
/// - **Resume**: when the source runs again, the region is removed.
package struct StationaryWakePlan: Sendable, Hashable {
    /// The region's identifier (distinct from the fence pager's `RegionPager.refreshIdentifier`).
    package static let identifier = "dev.beekon.stationary"
    /// Smallest radius: region exits are reported late and coarsely below it.
    package static let minimumRadiusMeters = 100.0
    /// Largest radius.
    package static let maximumRadiusMeters = 300.0
    /// OS region slots the wake region keeps for itself.
    package static let reservedSlots = 1

    /// The radius for a stationary detector radius: 3×, clamped to 100…300 m.
    package static func radius(stationaryRadiusMeters: Double) -> Double {
        let r = stationaryRadiusMeters.isFinite ? stationaryRadiusMeters : 0
        return min(maximumRadiusMeters, max(minimumRadiusMeters, 3 * r))
    }

    /// A circular wake region.
    package struct Region: Sendable, Hashable {
        /// Centre latitude, degrees.
        package var latitude: Double
        /// Centre longitude, degrees.
        package var longitude: Double
        /// Radius, metres.
        package var radiusMeters: Double

        /// Whether a position is inside the region.
        package func contains(latitude: Double, longitude: Double) -> Bool {
            Geodesy.distance(latitude, longitude, self.latitude, self.longitude) <= radiusMeters
        }
    }

    /// What the provider does with CoreLocation.
    package enum Action: Sendable, Hashable {
        /// Monitor this region under ``identifier`` (replacing any earlier one), exit only.
        case place(Region)
        /// Stop monitoring the region.
        case remove
        /// Ask for one fix (`requestLocation()`); the SDK's detector decides whether it moved.
        case requestFix
        /// Start the standard service again (after CoreLocation's automatic pause).
        case restartUpdates
    }

    /// The region placed, if any.
    package private(set) var region: Region?
    /// Whether CoreLocation paused the updates by itself (and they must be restarted).
    package private(set) var automaticallyPaused = false
    /// Whether an exit asked for a fix that has not arrived yet.
    package private(set) var awaitingFix = false
    private var radiusMeters = StationaryWakePlan.minimumRadiusMeters

    /// A plan with no region.
    package init() {}

    /// The SDK paused the source: the device is stationary at this position (the detector's anchor).
    package mutating func paused(at stationary: SourceTuning.Stationary) -> [Action] {
        radiusMeters = Self.radius(stationaryRadiusMeters: stationary.radiusMeters)
        return place(latitude: stationary.latitude, longitude: stationary.longitude)
    }

    /// CoreLocation paused the standard service by itself (`locationManagerDidPauseLocationUpdates`)
    /// at the last position it delivered.
    package mutating func osPaused(latitude: Double, longitude: Double, radiusMeters stationaryRadius: Double) -> [Action] {
        automaticallyPaused = true
        radiusMeters = Self.radius(stationaryRadiusMeters: stationaryRadius)
        return place(latitude: latitude, longitude: longitude)
    }

    /// The device left the region.
    package mutating func exited() -> [Action] {
        guard region != nil else { return [] }
        if automaticallyPaused {
            automaticallyPaused = false
            region = nil
            return [.restartUpdates, .remove]
        }
        awaitingFix = true
        return [.requestFix]
    }

    /// A fix reached the provider while the region is placed: after an exit it re-centres the
    /// region on itself (the SDK stays paused when the fix is inside the detector's radius; if it
    /// is not, ``resumed()`` follows). A significant-change fix during an automatic pause
    /// restarts the updates.
    package mutating func fix(latitude: Double, longitude: Double) -> [Action] {
        guard region != nil else { return [] }
        if automaticallyPaused {
            automaticallyPaused = false
            region = nil
            return [.restartUpdates, .remove]
        }
        guard awaitingFix else { return [] }
        awaitingFix = false
        return place(latitude: latitude, longitude: longitude)
    }

    /// The source runs again (the SDK resumed it, or the provider stopped): the region goes.
    package mutating func resumed() -> [Action] {
        awaitingFix = false
        automaticallyPaused = false
        guard region != nil else { return [] }
        region = nil
        return [.remove]
    }

    private mutating func place(latitude: Double, longitude: Double) -> [Action] {
        let placed = Region(latitude: latitude, longitude: longitude, radiusMeters: radiusMeters)
        guard placed != region else { return [] }
        region = placed
        return [.place(placed)]
    }
}
