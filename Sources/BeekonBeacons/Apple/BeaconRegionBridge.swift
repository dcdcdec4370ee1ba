#if (canImport(CoreLocation) && (os(iOS) || os(macOS))) || BEEKON_APPLE_SHIM
    import Beekon
    import CoreLocation
    import Foundation
    #if BEEKON_APPLE_SHIM
        import BeekonBeacons
    #endif

    /// A `CLLocationManager` for beacon regions and its delegate (SPEC BY-5): one CoreLocation
    /// call per method, no decisions. Region events go to `onEvent`; ranged beacons, as
    /// readings, into `buffer`.
    @MainActor
    final class BeaconRegionBridge: NSObject, CLLocationManagerDelegate {
        private let manager = CLLocationManager()
        private nonisolated let onEvent: @Sendable (RangingWakePlan.Event) -> Void
        private nonisolated let buffer: BeaconReadingBuffer
        private nonisolated let measuredPower: Int
        private var ranged: [CLBeaconIdentityConstraint] = []

        /// Creates the bridge (the manager's delegate).
        init(buffer: BeaconReadingBuffer, measuredPower: Int, onEvent: @escaping @Sendable (RangingWakePlan.Event) -> Void) {
            self.buffer = buffer
            self.measuredPower = measuredPower
            self.onEvent = onEvent
            super.init()
            manager.delegate = self
        }

        /// `CLLocationManager.isRangingAvailable()`.
        static var rangingAvailable: Bool { CLLocationManager.isRangingAvailable() }

        /// `startMonitoring(for:)` and `requestState(for:)` of a `CLBeaconRegion` per constraint.
        func monitor(_ constraints: [BeaconConstraint]) {
            for constraint in constraints {
                let region = CLBeaconRegion(beaconIdentityConstraint: constraint.clValue, identifier: constraint.identifier)
                region.notifyEntryStateOnDisplay = true
                manager.startMonitoring(for: region)
                manager.requestState(for: region)
            }
        }

        /// `startRangingBeacons(satisfying:)` per constraint.
        func startRanging(_ constraints: [BeaconConstraint]) {
            ranged = constraints.map(\.clValue)
            for constraint in ranged { manager.startRangingBeacons(satisfying: constraint) }
        }

        /// `stopRangingBeacons(satisfying:)` for what ``startRanging(_:)`` started.
        func stopRanging() {
            for constraint in ranged { manager.stopRangingBeacons(satisfying: constraint) }
            ranged = []
        }

        nonisolated func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {
            if region is CLBeaconRegion { onEvent(.didEnterRegion(region.identifier)) }
        }

        nonisolated func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {
            if region is CLBeaconRegion { onEvent(.didExitRegion(region.identifier)) }
        }

        nonisolated func locationManager(_ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion) {
            guard region is CLBeaconRegion else { return }
            let inside: Bool? = state == .inside ? true : state == .outside ? false : nil
            onEvent(.didDetermineState(region.identifier, inside: inside))
        }

        nonisolated func locationManager(
            _ manager: CLLocationManager, didRange beacons: [CLBeacon], satisfying beaconConstraint: CLBeaconIdentityConstraint
        ) {
            let power = measuredPower
            buffer.push(beacons.compactMap { $0.rangedBeacon.reading(scanner: "corelocation", measuredPower: power) })
        }
    }

    extension BeaconConstraint {
        /// The `CLBeaconIdentityConstraint`.
        var clValue: CLBeaconIdentityConstraint {
            switch (major, minor) {
            case let (major?, minor?): return CLBeaconIdentityConstraint(uuid: uuid, major: major, minor: minor)
            case let (major?, nil): return CLBeaconIdentityConstraint(uuid: uuid, major: major)
            default: return CLBeaconIdentityConstraint(uuid: uuid)
            }
        }
    }

    extension CLBeacon {
        /// The platform-neutral value.
        var rangedBeacon: RangedBeacon {
            RangedBeacon(uuid: uuid, major: major.intValue, minor: minor.intValue, rssi: rssi, timestamp: timestamp)
        }
    }
#endif
