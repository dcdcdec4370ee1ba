@testable import Beekon
import Foundation
import Testing

@Suite("TrackingMachine (LC-1..6)")
struct TrackingMachineTests {
    let s1 = UUID(), s2 = UUID()

    @Test func startPersistsIntentBeforeStartingTheSourceAndEmitsTrackingLast() {
        var m = TrackingMachine(config: BeekonConfig(preset: .precision))
        #expect(m.state == .idle)
        #expect(m.start(session: s1, resumeFrom: nil) == [.persistIntent(session: s1), .startProvider(.high), .emitState(.tracking)])
        #expect(m.state == .tracking && m.session == s1)
        #expect(m.start(session: s2, resumeFrom: nil) == [], "start while tracking is a no-op")
    }

    @Test func userStopClearsIntentSystemStopKeepsIt() {
        var m = TrackingMachine(config: BeekonConfig())
        _ = m.start(session: s1, resumeFrom: nil)
        #expect(m.stop(.system) == [.emitState(.stopped(.system)), .stopProvider, .closeSession(s1, .system)])
        #expect(m.state == .stopped(.system))
        _ = m.start(session: s2, resumeFrom: nil)
        #expect(m.stop(.user) == [.emitState(.stopped(.user)), .stopProvider, .clearIntent, .closeSession(s2, .user)])
        #expect(m.stop(.user) == [.clearIntent], "stop when not tracking only clears the intent")
        #expect(m.state == .stopped(.user))
    }

    @Test func providerFailuresMapToStopReasons() {
        var m = TrackingMachine(config: BeekonConfig())
        _ = m.start(session: s1, resumeFrom: nil)
        #expect(m.providerFailed(.permissionDenied).contains(.clearIntent))
        #expect(m.state == .stopped(.permissionDenied))
        _ = m.start(session: s2, resumeFrom: nil)
        let actions = m.providerFailed(.servicesDisabled("gpsd gone"))
        #expect(actions.contains(.clearIntent), "LC-5: services off clears the intent, so no relaunch resumes by itself")
        #expect(m.state == .stopped(.locationServicesDisabled))
    }

    @Test func abortStartRestoresThePreviousPhase() {
        var m = TrackingMachine(config: BeekonConfig())
        _ = m.start(session: s1, resumeFrom: nil)
        _ = m.stop(.user)
        _ = m.start(session: s2, resumeFrom: nil)
        m.abortStart()
        #expect(m.state == .stopped(.user) && m.session == nil)
    }

    @Test func fixesAreIgnoredUnlessTracking() {
        let m = TrackingMachine(config: BeekonConfig())
        #expect(m.decide(RawFix(timestamp: Date(), latitude: 1, longitude: 1), id: UUID()) == .notTracking)
    }

    @Test func configureChangesGateFromTheNextFixAndPowerModeOnPresetChange() {
        var m = TrackingMachine(config: BeekonConfig())
        _ = m.start(session: s1, resumeFrom: nil)
        let t0 = Date(timeIntervalSince1970: 1_000)
        guard case .admit(let first) = m.decide(RawFix(timestamp: t0, latitude: 0, longitude: 0), id: UUID()) else {
            Issue.record("first fix must pass")
            return
        }
        m.committed(first)
        let near = RawFix(timestamp: t0.addingTimeInterval(5), latitude: 0.0001, longitude: 0)
        #expect(m.decide(near, id: UUID()) == .rejected(.tooSoon))
        #expect(
            m.configure(BeekonConfig(preset: .saver, minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0)) == [
                .setPowerMode(.low)
            ])
        if case .admit(let l) = m.decide(near, id: UUID()) {
            #expect(l.motion == .moving && l.trigger == .interval && l.sessionId == s1)
        } else {
            Issue.record("new gate values must apply at once")
        }
    }

    @Test func resumeContinuesTheGateFromTheLastStoredFix() {
        var m = TrackingMachine(config: BeekonConfig(minTimeBetweenLocationsSeconds: 0, minDistanceBetweenLocationsMeters: 0))
        let t0 = Date(timeIntervalSince1970: 5_000)
        _ = m.start(session: s1, resumeFrom: GatePoint(timestamp: t0, latitude: 0, longitude: 0))
        #expect(m.decide(RawFix(timestamp: t0, latitude: 1, longitude: 1), id: UUID()) == .rejected(.notLater))
        #expect(m.decide(RawFix(timestamp: t0.addingTimeInterval(-100), latitude: 1, longitude: 1), id: UUID()) == .rejected(.notLater))
    }
}

extension TrackingMachine {
    /// Tests hand the machine raw fixes; the SDK sanitises each fix once before deciding.
    func decide(_ raw: RawFix, id: UUID) -> FixDecision {
        guard let fix = FixSanitiser.sanitise(raw) else {
            Issue.record("a test fix must be valid")
            return .notTracking
        }
        return decide(fix, id: id)
    }
}
