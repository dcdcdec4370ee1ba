import BeekonPrimitives
import Foundation
import Testing

@testable import Beekon

/// Profiles change what CoreLocation delivers, and the Apple
/// glue's remaining crash and wake paths, each as a plan.
@Suite("What the OS delivers")
struct DeliveryPlanTests {
    /// The OS's distance filter as `CLLocationManager.h` documents it: a movement shorter than
    /// the filter since the last delivered location is not reported.
    static func delivered(_ plan: LocationPowerPlan, walk metres: Double, step: Double) -> Int {
        guard plan.continuousUpdates else { return 0 }
        var count = 0
        var last: Double?
        for position in stride(from: 0, through: metres, by: step) {
            if let last, let filter = plan.distanceFilterMeters, position - last < filter { continue }
            last = position
            count += 1
        }
        return count
    }

    @Test("The family background profile: at most one wake per 150 m moved, from the standard service")
    func theBackgroundProfileFiltersByDistance() {
        let background = LocationProfile.background.applied(to: BeekonConfig())
        let tuning = SourceTuning(config: background)
        #expect(tuning.distanceFilterMeters == 150)
        let plan = LocationPowerPlan(mode: background.preset.powerMode, tuning: tuning)
        #expect(plan.distanceFilterMeters == 150 && plan.desiredAccuracy == .hundredMeters)
        #expect(plan.pausesAutomatically, "reference 004 keeps automatic pauses on for the coarse background profile")
        #expect(plan.service(liveUpdatesAvailable: true) == .standard, "live updates have no distance filter")
        #expect(plan.service(liveUpdatesAvailable: false) == .standard)
        // 3 km walked with a fix every 1.4 m: 21 wakes, against one per fix (2,143) before.
        let wakes = Self.delivered(plan, walk: 3_000, step: 1.4)
        #expect(wakes <= 3_000 / 150 + 1)
        #expect(Self.delivered(LocationPowerPlan(mode: .low), walk: 3_000, step: 1.4) > 2_000, "without the tuning: every fix")
    }

    @Test("Every preset's gate distance reaches the OS; a heartbeat, turn-aware or error-bounded admission keep every fix")
    func presetsAndTheirExceptions() {
        for preset in Preset.allCases {
            let tuning = SourceTuning(config: BeekonConfig(preset: preset))
            #expect(tuning.distanceFilterMeters == preset.minDistanceBetweenLocationsMeters)
            let plan = LocationPowerPlan(mode: preset.powerMode, tuning: tuning)
            #expect(plan.service(liveUpdatesAvailable: true) == .standard, "\(preset)")
        }
        let foreground = LocationProfile.foreground.applied(to: BeekonConfig())
        #expect(SourceTuning(config: foreground).distanceFilterMeters == nil, "the 30 s heartbeat needs a fix every interval")
        let live = LocationPowerPlan(mode: foreground.preset.powerMode, tuning: SourceTuning(config: foreground))
        #expect(live.service(liveUpdatesAvailable: true) == .liveUpdates(.default))
        #expect(live.service(liveUpdatesAvailable: false) == .standard)
        #expect(SourceTuning(config: BeekonConfig(turnThresholdDegrees: 30)).distanceFilterMeters == nil)
        #expect(SourceTuning(config: BeekonConfig(maxDeviationMeters: 10)).distanceFilterMeters == nil)
        #expect(SourceTuning(config: BeekonConfig(minDistanceBetweenLocationsMeters: 0)).distanceFilterMeters == nil)
        #expect(LocationPowerPlan(mode: .high).service(liveUpdatesAvailable: true) == .liveUpdates(.automotiveNavigation))
        #expect(!LocationPowerPlan(mode: .high).pausesAutomatically && !LocationPowerPlan(mode: .balanced).pausesAutomatically)
        #expect(LocationPowerPlan(mode: .paused, tuning: SourceTuning(distanceFilterMeters: 150)).distanceFilterMeters == nil)
    }

    @Test("XR-1: without location in UIBackgroundModes, no mode sets allowsBackgroundLocationUpdates (a fatal error)")
    func noBackgroundUpdatesWithoutTheBackgroundMode() {
        for mode in PowerMode.allCases {
            let plan = LocationPowerPlan(mode: mode, backgroundLocationDeclared: false)
            #expect(!plan.allowsBackgroundUpdates && !plan.showsBackgroundIndicator, "\(mode)")
            #expect(LocationPowerPlan(mode: mode, backgroundLocationDeclared: true).allowsBackgroundUpdates)
        }
    }

    @Test("A one-shot locate while paused asks for its own accuracy, and survives a probe's start or stop")
    func theOneShotAccuracyIsRaisedAndTheRequestKept() {
        let paused = LocationPowerPlan(mode: .paused)
        #expect(paused.desiredAccuracy == .threeKilometers)
        #expect(paused.desiredAccuracy(oneShot: .high) == .bestForNavigation, "not the paused plan's 3 km")
        #expect(paused.desiredAccuracy(oneShot: nil) == .threeKilometers, "restored once answered")
        #expect(LocationPowerPlan(mode: .high).desiredAccuracy(oneShot: .low) == .bestForNavigation, "never coarser than the plan")
        // The probe's pause (stopUpdatingLocation) cancels the request: asked again.
        #expect(paused.reissuesOneShot(pending: true, liveUpdatesAvailable: false))
        #expect(!paused.reissuesOneShot(pending: false, liveUpdatesAvailable: false))
        // The probe's start on the standard service answers it with its updates.
        let probe = LocationPowerPlan(mode: .balanced, tuning: SourceTuning(distanceFilterMeters: 100))
        #expect(!probe.reissuesOneShot(pending: true, liveUpdatesAvailable: true))
        #expect(
            LocationPowerPlan(mode: .balanced).reissuesOneShot(pending: true, liveUpdatesAvailable: true),
            "live updates: the manager stopped")
    }

    @Test("XR-1: the CLMonitor is opened once, and only once protected data is available")
    func theMonitorOpensOnceAfterProtectedData() {
        var opening = MonitorOpening()
        #expect(opening.request(protectedDataAvailable: false) == .awaitProtectedData)
        #expect(opening.request(protectedDataAvailable: false) == .awaitProtectedData)
        #expect(opening.request(protectedDataAvailable: true) == .open)
        // Re-entrant callers while the first one awaits CLMonitor(_:).
        #expect(opening.request(protectedDataAvailable: true) == .awaitOpening)
        #expect(opening.request(protectedDataAvailable: false) == .awaitOpening)
        opening.opened()
        #expect(opening.request(protectedDataAvailable: true) == .use)
        #expect(opening.request(protectedDataAvailable: false) == .use)
    }

    @Test("The refresh identifier is the host's, and a refused submit says what to fix")
    func theRefreshIdentifierIsConfigurable() {
        let plan = BackgroundRefreshPlan(syncIntervalSeconds: 300, identifier: "com.example.app.refresh")
        #expect(plan.identifier == "com.example.app.refresh")
        #expect(BackgroundRefreshPlan(syncIntervalSeconds: 300).identifier == "dev.beekon.refresh")
        #expect(BeekonDependencies(databasePath: "/x", provider: NoProvider()).backgroundRefreshIdentifier == "dev.beekon.refresh")
        let notPermitted = plan.submitFailure(code: 3)
        #expect(notPermitted.contains("com.example.app.refresh") && notPermitted.contains("BGTaskSchedulerPermittedIdentifiers"))
        #expect(plan.submitFailure(code: 2).contains("too many pending"))
        #expect(plan.submitFailure(code: 1).contains("unavailable"))
        #expect(plan.submitFailure(code: 99).contains("99"))
    }

    struct NoProvider: LocationProvider {
        func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> { AsyncThrowingStream { $0.finish() } }
        func setPowerMode(_ mode: PowerMode) async {}
        func stop() async {}
    }
}
