#if (canImport(CoreLocation) && (os(iOS) || os(macOS))) || BEEKON_APPLE_SHIM
    import Beekon
    import BeekonPrimitives
    import CoreLocation
    import Foundation
    #if BEEKON_APPLE_SHIM
        import BeekonBeacons
    #endif

    /// Beacon proximity on iOS (SPEC BY-5): CoreLocation monitors a `CLBeaconRegion` per
    /// region of the configuration; a region event (`didEnterRegion`, `didExitRegion`,
    /// `didDetermineState` inside) or the app entering the background begins a wake under the execution budget
    /// (pass `BackgroundTaskBudget()`: a UIKit background task, about 10 s after a region
    /// event, up to about 180 s), which ranges with `startRangingBeacons(satisfying:)`, feeds
    /// the ranged beacons to the proximity trigger, stops ranging and ends the task a safety
    /// margin before expiry, and persists the decision state in `store` so the next wake
    /// continues. Each proximity event is recorded in `beekon` (stored, emitted, uploaded).
    ///
    /// The decisions are platform-neutral (``BeaconWakeCoordinator``, ``RangingWakePlan``,
    /// ``BeaconConstraint``); this type only connects them to CoreLocation. Needs Always
    /// location authorization (the host app asks for it); regions without a UUID are not
    /// ranged (CoreLocation cannot range every beacon).
    public final class CoreLocationBeaconRanger: BeaconRangingControl {
        private let constraints: [BeaconConstraint]
        private let buffer = BeaconReadingBuffer()
        private let measuredPower: Int
        private let bridge = Locked<BeaconRegionBridge?>(nil)
        private let coordinator = Locked<BeaconWakeCoordinator?>(nil)

        /// Creates a ranger; CoreLocation is touched only by ``start(config:budget:store:recordingInto:lifecycle:)``.
        /// `measuredPower` is the beacons' calibrated RSSI at 1 m (CoreLocation does not report it).
        public init(regions: [BeaconRegion], measuredPower: Int = -59) {
            constraints = BeaconConstraint.of(regions)
            self.measuredPower = measuredPower
        }

        /// Starts monitoring the regions (and, with `lifecycle`, entering the background);
        /// returns false when the device cannot range beacons.
        @discardableResult
        public func start(
            config: BeaconRangingConfig, budget: any ExecutionBudget, store: any RangingStateStore, recordingInto beekon: Beekon,
            lifecycle: (any AppLifecycleSource)? = nil
        ) async -> Bool {
            let coordinator = BeaconWakeCoordinator(
                tracker: config.makeTracker(), budget: budget, clock: SystemClock(), store: store, control: self,
                record: { events in _ = try? await beekon.recordProximity(events) })
            self.coordinator.value = coordinator
            let (buffer, power, constraints) = (self.buffer, measuredPower, self.constraints)
            let available = await MainActor.run { () -> Bool in
                guard BeaconRegionBridge.rangingAvailable else { return false }
                let made = BeaconRegionBridge(buffer: buffer, measuredPower: power) { event in
                    Task { _ = await coordinator.receive(event) }
                }
                made.monitor(constraints)
                bridge.value = made
                return true
            }
            if available, let lifecycle {
                Task {
                    for await event in await lifecycle.events() where event == .didEnterBackground {
                        _ = await coordinator.receive(.enteredBackground)
                    }
                }
            }
            return available
        }

        /// Starts ranging every constraint, dropping readings left from an earlier wake.
        public func startRanging() async {
            buffer.reset()
            let bridge = self.bridge.value
            let constraints = self.constraints
            await MainActor.run { bridge?.startRanging(constraints) }
        }

        /// Stops ranging.
        public func stopRanging() async {
            let bridge = self.bridge.value
            await MainActor.run { bridge?.stopRanging() }
        }

        /// The next ranged reading.
        public func nextReading() async -> BeaconReading? {
            await buffer.next()
        }
    }
#endif
