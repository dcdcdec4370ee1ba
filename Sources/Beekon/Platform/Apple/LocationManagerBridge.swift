#if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
    import CoreLocation
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// The `CLLocationManager` and its delegate, wrapped in an `AsyncStream` of events so the
    /// provider consumes one shape on every OS version: continuous updates on iOS 15–16 and
    /// macOS 13, the significant-location-change monitor everywhere, region monitoring before
    /// iOS 17. One CoreLocation call per method; no decisions.
    @MainActor
    final class LocationManagerBridge: NSObject, CLLocationManagerDelegate {
        /// What the delegate reported.
        enum Event: Sendable {
            /// New fixes (continuous or significant-change updates).
            case samples([LocationSample])
            /// Authorization or accuracy authorization changed.
            case access(LocationAccess)
            /// `kCLErrorDenied`: access was refused while running.
            case denied
            /// The device left the refresh region (time to re-page).
            case leftRefreshRegion
            /// The device left the stationary wake region (``StationaryWakePlan``).
            case leftWakeRegion
            /// CoreLocation paused the standard service by itself (`locationManagerDidPauseLocationUpdates`).
            case updatesPaused
            /// The OS could not monitor the region with this identifier (`monitoringDidFailFor`).
            case monitoringFailed(String)
        }

        private let manager = CLLocationManager()
        /// The delegate's events.
        nonisolated let events: AsyncStream<Event>
        private nonisolated let sink: AsyncStream<Event>.Continuation

        override init() {
            (events, sink) = AsyncStream.makeStream(of: Event.self)
            super.init()
            manager.delegate = self
        }

        /// Access as the manager sees it now.
        var access: LocationAccess { LocationAccess(manager: manager) }

        /// The manager's last known position, if any.
        var lastSample: LocationSample? { manager.location?.beekonSample }

        /// Applies the manager settings of `plan` (the standard service), with `accuracy` as
        /// `desiredAccuracy` (the plan's, or finer while a one-shot request waits).
        /// `allowsBackgroundLocationUpdates` is false unless the bundle declares background
        /// location: `CLLocationManager.h`, "Setting this property to YES when UIBackgroundModes
        /// does not include \"location\" is a fatal error."
        func configure(_ plan: LocationPowerPlan, accuracy: LocationPowerPlan.Accuracy) {
            manager.desiredAccuracy = accuracy.clValue
            manager.distanceFilter = plan.distanceFilterMeters ?? kCLDistanceFilterNone
            manager.activityType = plan.activityType.clValue
            #if os(iOS) || BEEKON_APPLE_SHIM
                manager.pausesLocationUpdatesAutomatically = plan.pausesAutomatically
                manager.allowsBackgroundLocationUpdates = plan.allowsBackgroundUpdates
                manager.showsBackgroundLocationIndicator = plan.showsBackgroundIndicator
            #endif
        }

        /// `desiredAccuracy` alone (a one-shot request raises it, its answer restores it).
        func setDesiredAccuracy(_ accuracy: LocationPowerPlan.Accuracy) {
            manager.desiredAccuracy = accuracy.clValue
        }

        /// `startUpdatingLocation()`.
        func startUpdates() { manager.startUpdatingLocation() }
        /// `stopUpdatingLocation()`.
        func stopUpdates() { manager.stopUpdatingLocation() }
        /// `requestLocation()`: one location, delivered through the same delegate callback.
        func requestOneLocation() { manager.requestLocation() }
        /// `startMonitoringSignificantLocationChanges()`: what relaunches a terminated app.
        func startSignificantChanges() { manager.startMonitoringSignificantLocationChanges() }
        /// `stopMonitoringSignificantLocationChanges()`.
        func stopSignificantChanges() { manager.stopMonitoringSignificantLocationChanges() }

        /// Applies a re-page with `CLLocationManager` region monitoring (before iOS 17).
        func apply(_ change: RegionChange) {
            let stale = Set(change.remove + [RegionPager.refreshIdentifier])
            for region in manager.monitoredRegions where stale.contains(region.identifier) {
                manager.stopMonitoring(for: region)
            }
            for fence in change.add {
                let region = CLCircularRegion(center: fence.coordinate, radius: fence.radiusMeters, identifier: fence.id)
                manager.startMonitoring(for: region)
            }
            let refresh = CLCircularRegion(
                center: change.refresh.coordinate, radius: change.refresh.radiusMeters,
                identifier: RegionPager.refreshIdentifier)
            refresh.notifyOnEntry = false
            manager.startMonitoring(for: refresh)
        }

        /// Places (or moves) the stationary wake region, exit only (before iOS 17).
        func placeWake(_ region: StationaryWakePlan.Region) {
            stopMonitoring(ids: [StationaryWakePlan.identifier])
            let circle = CLCircularRegion(center: region.coordinate, radius: region.radiusMeters, identifier: StationaryWakePlan.identifier)
            circle.notifyOnEntry = false
            manager.startMonitoring(for: circle)
        }

        /// The identifiers of every region the app monitors, from this or an earlier launch
        /// (beacon regions and the host's own included).
        var monitoredIdentifiers: [String] { manager.monitoredRegions.map(\.identifier) }

        /// Stops monitoring the regions with these identifiers.
        func stopMonitoring(ids: [String]) {
            let stale = Set(ids)
            for region in manager.monitoredRegions where stale.contains(region.identifier) {
                manager.stopMonitoring(for: region)
            }
        }

        nonisolated func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
            sink.yield(.samples(locations.map(\.beekonSample)))
        }

        nonisolated func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {
            if (error as? CLError)?.code == .denied { sink.yield(.denied) }
        }

        nonisolated func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
            sink.yield(.access(LocationAccess(manager: manager)))
        }

        nonisolated func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {
            if region.identifier == RegionPager.refreshIdentifier { sink.yield(.leftRefreshRegion) }
            if region.identifier == StationaryWakePlan.identifier { sink.yield(.leftWakeRegion) }
        }

        nonisolated func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager) {
            sink.yield(.updatesPaused)
        }

        nonisolated func locationManager(_ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: any Error) {
            if let region { sink.yield(.monitoringFailed(region.identifier)) }
        }
    }
#endif
