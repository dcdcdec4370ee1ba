@testable import Beekon
import Foundation
import Testing

/// The stationary vocabularies (the detector's provider actions, the timers'
/// actions) are decided into the fix decider's one list of effects (`FixEffect`), run by the
/// one interpreter; each decision checked as a value (FX-6, BY-9).
@Suite("Stationary effects in the fix decider (FX-6, BY-9)")
struct StationaryEffectsTests {
    let session = UUID()
    let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    func fix(_ s: Double, north: Double = 0) -> SanitisedFix {
        FixSanitiser.sanitise(RawFix(timestamp: t0 + s, latitude: 48 + north / 111_195, longitude: 11, accuracy: 5))!
    }

    func tracking(_ config: BeekonConfig) -> TrackingMachine {
        var m = TrackingMachine(config: config)
        _ = m.start(session: session, resumeFrom: nil)
        return m
    }

    func same(_ got: [FixEffect], _ expected: [FixEffect]) -> Bool { got == expected }

    @Test("FX-6: pausing while tracking pauses the source; resuming restores the preset's power mode")
    func pauseAndResume() {
        var m = tracking(BeekonConfig(preset: .precision))
        let paused = m.decide([StationaryDetector.Action.pauseProvider])
        #expect(same(paused, [.setPowerMode(.paused)]))
        let resumed = m.decide([StationaryDetector.Action.resumeProvider])
        #expect(same(resumed, [.setPowerMode(Preset.precision.powerMode)]))
    }

    @Test("FX-6: not tracking, the provider is left alone")
    func notTracking() {
        var m = TrackingMachine(config: BeekonConfig())
        let none = m.decide([StationaryDetector.Action.pauseProvider, .resumeProvider])
        #expect(same(none, []))
    }

    @Test("FX-6: the fix-marking and check-in actions have no effect of their own")
    func markingActionsHaveNoEffect() {
        var m = tracking(BeekonConfig())
        let raw = RawFix(timestamp: t0, latitude: 48, longitude: 11, accuracy: 5)
        let none = m.decide([StationaryDetector.Action.becameStationary(raw), .resumedMoving(raw), .checkIn(raw)])
        #expect(same(none, []))
    }

    @Test("BY-9: the pause stores the window's held fix first, then pauses the source")
    func pauseStoresTheHeldFixFirst() throws {
        var m = tracking(BeekonConfig(whenStationary: .pause, maxDeviationMeters: 10))
        let first = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        guard case .store(let a, _, _)? = first.first else {
            Issue.record("the first fix is stored: \(first)")
            return
        }
        m.committed(a)
        _ = m.decide(.tracked(fix(1, north: 10), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let held = try #require(m.held)
        let effects = m.decide([StationaryDetector.Action.pauseProvider])
        let expected: [FixEffect] = [
            TrackingMachine.stored(held, crossing: nil), .persistHeld(nil), .setPowerMode(.paused),
        ]
        #expect(same(effects, expected))
        #expect(m.held == nil)
    }

    @Test("FX-6: the timers' actions map one to one")
    func timers() {
        let due = t0 + 900
        let effects = TrackingMachine.effects(of: [.pauseSource, .armProbe, .cancelProbe, .armCheckIn(due), .cancelCheckIn])
        #expect(same(effects, [.setPowerMode(.paused), .armProbe, .cancelProbe, .armCheckIn(due), .cancelCheckIn]))
    }
}
