@testable import Beekon
import Foundation
import Testing

/// The probe and check-in timing of the stationary pause (FX-6), without an actor or a clock.
@Suite("Stationary timing (FX-6)")
struct StationaryTimingTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// A timing whose detector has dwelt 120 s at (48, 11) under `policy`: stationary, source paused.
    func paused(_ policy: StationaryPolicy) -> StationaryTiming {
        var timing = StationaryTiming()
        _ = timing.detector.reconfigure(policy: policy, radiusMeters: 5, checkInIntervalSeconds: 900)
        for s in stride(from: 0.0, through: 120, by: 10) {
            _ = timing.detector.observe(fix: RawFix(timestamp: t0.addingTimeInterval(s), latitude: 48, longitude: 11, accuracy: 3))
        }
        return timing
    }

    @Test func aPausedSourceGetsAProbeAndIsPutBackToSleepAfterItsFix() {
        var timing = paused(.pause)
        #expect(timing.detector.providerPaused)
        #expect(timing.settleProbe(tracking: true) == [.armProbe])
        let first = timing.probeDue(tracking: true)
        let second = timing.probeDue(tracking: true)
        #expect(first, "the probe wakes the source once")
        #expect(!second, "not again while its fix is awaited")
        #expect(timing.settleProbe(tracking: true) == [.pauseSource, .armProbe], "still inside: sleep again, probe again")
        #expect(!timing.probing)
    }

    @Test func noProbeWhenNotTrackingOrMoving() {
        var timing = paused(.pause)
        let notTracking = timing.probeDue(tracking: false)
        #expect(!notTracking)
        var moving = StationaryTiming()
        #expect(moving.settleProbe(tracking: true) == [.cancelProbe])
        let movingProbe = moving.probeDue(tracking: true)
        #expect(!movingProbe)
    }

    @Test func theCheckInTimerIsArmedOnceForEachDueTime() throws {
        var timing = paused(.pauseWithCheckIns)
        let due = try #require(timing.detector.nextCheckInDue)
        #expect(timing.rearmCheckIn(tracking: true) == [.armCheckIn(due)])
        #expect(timing.rearmCheckIn(tracking: true).isEmpty, "already armed for that time")
        timing.checkInFired()
        #expect(timing.rearmCheckIn(tracking: true) == [.armCheckIn(due)], "fired: armed again for the detector's due time")
        #expect(timing.rearmCheckIn(tracking: false) == [.cancelCheckIn], "no check-ins without a session")
        #expect(timing.rearmCheckIn(tracking: false).isEmpty)
    }

    @Test func stoppingTheSourceCancelsBothTimers() {
        var timing = paused(.pauseWithCheckIns)
        _ = timing.rearmCheckIn(tracking: true)
        _ = timing.probeDue(tracking: true)
        #expect(timing.sourceStopped() == [.cancelCheckIn, .cancelProbe])
        #expect(timing.armedCheckIn == nil && !timing.probing)
    }
}
