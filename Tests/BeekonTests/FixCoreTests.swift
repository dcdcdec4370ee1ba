@testable import Beekon
import Foundation
import Testing

/// The per-fix decision as one value (`FixCore`): each event in, the complete list of
/// effects out, in order, for the interpreter to run once. Time comes with the fixes or as
/// `now`, ids from the caller: no clock is read.
@Suite("Fix core: one decision per fix (FX-6, FX-7, BY-4, GF-1)")
struct FixCoreTests {
    let session = UUID()
    let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    func raw(_ s: Double, north: Double = 0) -> RawFix {
        RawFix(timestamp: t0 + s, latitude: 48 + north / 111_195, longitude: 11, accuracy: 5)
    }

    func tracking(_ config: BeekonConfig) -> FixCore {
        var core = FixCore(classifier: SpeedActivityClassifier())
        core.restore(config)
        _ = core.start(session: session, resumeFrom: nil)
        return core
    }

    func stored(_ effects: [FixEffect]) -> [Location] {
        effects.compactMap { if case .store(let l, _, _) = $0 { l } else { nil } }
    }

    /// Feeds a fix and commits what it stored, as the interpreter would.
    func feed(_ core: inout FixCore, _ fix: RawFix) -> [FixEffect] {
        let effects = core.fix(fix, makeID: { UUID() })
        for l in stored(effects) { core.machine.committed(l) }
        return effects
    }

    /// Compares with an expected list typed up front (a literal of implicit members beside `==`
    /// type-checks slowly).
    func same(_ got: [FixEffect], _ expected: [FixEffect]) -> Bool { got == expected }

    @Test("A tracked fix: stored with its follow-ups, then the probe settled and the dwell check, in one list")
    func trackedFixIsOneList() throws {
        var core = tracking(BeekonConfig())
        let id = UUID()
        let effects = core.fix(raw(0), makeID: { id })
        let l = try #require(stored(effects).first)
        #expect(l.id == id && l.sessionId == session && l.trigger == .interval && l.timestamp == t0)
        let then: [FixEffect] = [.commit(l), .publish(l), .notifySync, .prune]
        #expect(same(effects, [.store(l, crossing: FixCrossing.none, then: then), .cancelProbe, .rearmDwellCheck]))
    }

    @Test("Not tracking: no effect; an invalid fix: counted, nothing else")
    func notTrackingAndInvalid() {
        var idle = FixCore(classifier: SpeedActivityClassifier())
        #expect(same(idle.fix(raw(0), makeID: { UUID() }), []))
        var core = tracking(BeekonConfig())
        let bad = RawFix(timestamp: t0, latitude: .nan, longitude: 11, accuracy: 5)
        #expect(same(core.fix(bad, makeID: { UUID() }), [.invalid]))
    }

    @Test("FX-6: the fix that completes the dwell pauses the source, arms the probe and sets the motion, in the same list")
    func dwellPausesInTheSameList() {
        var core = tracking(BeekonConfig(whenStationary: .pause))
        _ = feed(&core, raw(0))
        let effects = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 10, north: 1))
        let tail: [FixEffect] = [.setPowerMode(.paused), .armProbe, .setMotion(.stationary), .rearmDwellCheck]
        #expect(same(Array(effects.suffix(4)), tail), "\(effects)")
        #expect(core.stationary.detector.providerPaused && core.stationary.detector.motion == .stationary)
    }

    @Test("FX-6: leaving the radius after the pause resumes the source with a `motion` fix past the gate")
    func leavingResumesWithMotionFix() throws {
        var core = tracking(BeekonConfig(preset: .precision, whenStationary: .pause))
        _ = feed(&core, raw(0))
        _ = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 10, north: 1))
        let effects = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 11, north: 500))
        let l = try #require(stored(effects).first, "one second later, yet stored: the return to motion bypasses the gate")
        #expect(l.trigger == .motion && l.motion == .moving)
        #expect(effects.contains(.setPowerMode(Preset.precision.powerMode)) && effects.contains(.setMotion(.moving)))
    }

    @Test("FX-6: the probe wakes the paused source once; its fix, still inside, puts it back to sleep")
    func probeWakesOnceThenSleepsAgain() {
        var core = tracking(BeekonConfig(preset: .precision, whenStationary: .pause))
        #expect(same(core.probeTimerFired(), []), "not paused: no probe")
        _ = feed(&core, raw(0))
        _ = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 10, north: 1))
        #expect(same(core.probeTimerFired(), [.setPowerMode(Preset.precision.powerMode)]))
        #expect(same(core.probeTimerFired(), []), "one probe at a time")
        let effects = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 70, north: 2))
        let tail: [FixEffect] = [.setPowerMode(.paused), .armProbe, .rearmDwellCheck]
        #expect(same(Array(effects.suffix(3)), tail), "\(effects)")
        #expect(same(core.sourceStopped(), [.cancelCheckIn, .cancelProbe]))
    }

    @Test("FX-6: a new run starts without the last run's stationary state; a second start changes nothing")
    func aNewRunForgetsTheDetector() {
        var core = tracking(BeekonConfig(whenStationary: .pause))
        _ = feed(&core, raw(0))
        _ = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 10, north: 1))
        #expect(core.start(session: UUID(), resumeFrom: nil).isEmpty, "already tracking")
        #expect(core.stationary.detector.motion == .stationary)
        _ = core.machine.stop(.user)
        #expect(!core.start(session: UUID(), resumeFrom: nil).isEmpty)
        #expect(core.stationary.detector.motion == .unknown && !core.stationary.detector.providerPaused)
    }

    @Test("BY-2: a locate answer is stored past the gate with the current motion; an invalid fix takes no id")
    func locateAnswer() throws {
        var core = tracking(BeekonConfig(whenStationary: .keepTracking))
        _ = feed(&core, raw(0))
        var taken = 0
        let invalid = core.locateAnswer(RawFix(timestamp: t0 + 1, latitude: 91, longitude: 11), requestID: UUID()) {
            taken += 1
            return UUID()
        }
        #expect(invalid == nil && taken == 0)
        let request = UUID()
        let decided = core.locateAnswer(raw(1), requestID: request, makeID: { UUID() })
        let answer = try #require(decided)
        let l = try #require(answer.effects.storedLocation(answer.id))
        #expect(l.trigger == .manual && l.locateRequestId == request && l.sessionId == session)
        #expect(l.motion == core.stationary.detector.motion)
    }

    @Test("BY-4: the check-in timer at its due time stores a check-in, wakes the upload and arms the next")
    func checkInTimer() throws {
        var core = tracking(BeekonConfig(whenStationary: .pauseWithCheckIns))
        _ = feed(&core, raw(0))
        let paused = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 10, north: 1))
        let due = try #require(core.stationary.detector.nextCheckInDue)
        #expect(paused.contains(.armCheckIn(due)))
        let id = UUID()
        let effects = core.checkInTimerFired(now: due, makeID: { id })
        let checkIn = try #require(stored(effects).first)
        #expect(checkIn.id == id && checkIn.trigger == .checkIn && checkIn.motion == .stationary && checkIn.timestamp == due)
        let then: [FixEffect] = [.commit(checkIn), .publish(checkIn), .notifySync, .prune, .wakeSync(.checkIn)]
        let next = try #require(core.stationary.detector.nextCheckInDue)
        #expect(next > due)
        #expect(same(effects, [.store(checkIn, crossing: nil, then: then), .armCheckIn(next)]))
    }

    @Test("BY-4: before its due time the check-in timer stores nothing and re-arms for the due time")
    func checkInTimerEarly() throws {
        var core = tracking(BeekonConfig(whenStationary: .pauseWithCheckIns))
        _ = feed(&core, raw(0))
        _ = feed(&core, raw(StationaryDetector.defaultDwellSeconds + 10, north: 1))
        let due = try #require(core.stationary.detector.nextCheckInDue)
        let effects = core.checkInTimerFired(now: due - 1, makeID: { UUID() })
        #expect(same(effects, [.armCheckIn(due)]))
    }

    @Test("GF-1: a crossing passes the gate as a `geofence` fix; the fence's state changes only once it is stored")
    func crossingStateFollowsTheStore() throws {
        var core = tracking(BeekonConfig(whenStationary: .keepTracking))
        try core.geofences.add([Geofence(id: "home", latitude: 48, longitude: 11.01, radiusMeters: 200)])
        _ = feed(&core, raw(0))
        var n = 0
        let effects = core.fix(
            RawFix(timestamp: t0 + 1, latitude: 48, longitude: 11.01, accuracy: 5),
            makeID: {
                n += 1
                return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(n)))
            })
        guard case .store(let l, let crossing?, _)? = effects.first else {
            Issue.record("the crossing fix is stored with its crossing: \(effects)")
            return
        }
        #expect(l.trigger == .geofence, "one second after the last fix: only the crossing admits it")
        #expect(crossing.events.map(\.transition) == [.enter] && crossing.states == ["home": true])
        let insideBeforeStore = core.geofences.isInside("home")
        #expect(!insideBeforeStore, "not stored yet")
        core.crossingStored(crossing)
        let insideAfterStore = core.geofences.isInside("home")
        #expect(insideAfterStore)
    }

    @Test("GF-1: a fence removed before its crossing was stored keeps no state")
    func crossingOfRemovedFence() {
        var core = tracking(BeekonConfig())
        core.crossingStored(FixCrossing(states: ["gone": true]))
        let inside = core.geofences.insideIDs
        #expect(inside.isEmpty)
    }

    @Test("BY-4: a fix the heartbeat makes due is logged and stored although the gate would refuse it")
    func heartbeatBypassesTheGate() throws {
        var core = tracking(BeekonConfig(whenStationary: .keepTracking, heartbeatSeconds: 10))
        _ = feed(&core, raw(0))
        let refused = feed(&core, raw(5))
        #expect(stored(refused).isEmpty, "same place five seconds on: the gate refuses it")
        let effects = feed(&core, raw(15))
        #expect(effects.first == .heartbeat(intervalSeconds: 10))
        #expect(try #require(stored(effects).first).timestamp == t0 + 15)
    }
}
