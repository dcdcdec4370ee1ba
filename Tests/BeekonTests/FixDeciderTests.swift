@testable import Beekon
import BeekonTestSupport
import Foundation
import Testing

/// The one decider for every fix (`TrackingMachine.decide(_:)`), each decision checked as a
/// value: what is stored, in which order, and what follows a store (FX-7, BY-9, BY-2, BY-4, FX-6).
@Suite("Fix decider (FX-7, BY-9, BY-2, BY-4, FX-6)")
struct FixDeciderTests {
    let session = UUID(), idle = UUID(), request = UUID()
    let t0 = Date(timeIntervalSince1970: 1_767_225_600)

    func fix(_ s: Double, north: Double = 0) -> SanitisedFix {
        FixSanitiser.sanitise(RawFix(timestamp: t0 + s, latitude: 48 + north / 111_195, longitude: 11, accuracy: 5))!
    }

    func tracking(_ config: BeekonConfig = BeekonConfig(whenStationary: .keepTracking)) -> TrackingMachine {
        var m = TrackingMachine(config: config)
        _ = m.start(session: session, resumeFrom: nil)
        return m
    }

    func stored(_ effects: [FixEffect]) -> [Location] {
        effects.compactMap { if case .store(let l, _, _) = $0 { l } else { nil } }
    }

    /// Compares with an expected list typed up front (a literal of implicit members beside `==`
    /// type-checks slowly).
    func same(_ got: [FixEffect], _ expected: [FixEffect]) -> Bool { got == expected }

    /// FX-7: a stored fix moves the gate, is emitted, counted by the upload and may prune, in that order.
    func standard(_ l: Location) -> [FixEffect] { [.commit(l), .publish(l), .notifySync, .prune] }

    /// No other code path writes a fix: under `Sources`, a `FixWrite` is made only by
    /// the interpreter's file, and the store tests' door (`storeTestsOnly`) is used by no source.
    @Test func onlyTheInterpreterWritesFixes() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(files.count > 50)
        var makers: [String] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            if text.contains("FixWrite()") || text.contains(".storeTestsOnly)") { makers.append(file.lastPathComponent) }
        }
        #expect(makers == ["Beekon+Fixes.swift"])
    }

    @Test func aTrackedFixIsIgnoredUnlessTracking() {
        var m = TrackingMachine(config: BeekonConfig())
        let e1 = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        #expect(same(e1, []))
    }

    @Test func anAdmittedFixIsStoredWithItsCrossingThenFollowedUp() throws {
        var m = tracking()
        let crossing = FixCrossing(states: ["home": true])
        let effects = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .geofence, bypassGate: true, crossing: crossing))
        let l = try #require(stored(effects).first)
        #expect(same(effects, [.store(l, crossing: crossing, then: standard(l))]))
        #expect(l.trigger == .geofence && l.sessionId == session)
        #expect(m.gate.last == nil, "the gate moves only once the fix is stored (the commit effect)")
    }

    @Test func aRejectedFixIsCountedAndItsCrossingStillStored() throws {
        var m = tracking(BeekonConfig(minTimeBetweenLocationsSeconds: 60, whenStationary: .keepTracking))
        let e2 = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let first = try #require(
            stored(e2).first)
        m.committed(first)
        let e3 = m.decide(.tracked(fix(5, north: 200), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        #expect(
            same(
                e3,
                [.rejected(.tooSoon)]))
        let crossing = FixCrossing(states: ["home": false])
        let e4 = m.decide(
            .tracked(fix(5, north: 200), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: crossing))
        #expect(
            same(
                e4,
                [.rejected(.tooSoon), .storeCrossing(crossing)]))
    }

    /// BY-9: a held fix's crossing is stored alone; the held fix itself is persisted.
    @Test func aHeldFixIsPersistedAndItsCrossingStoredAlone() throws {
        var m = tracking(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 10))
        let e5 = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let a = try #require(
            stored(e5).first)
        m.committed(a)
        let crossing = FixCrossing(states: ["x": true])
        let effects = m.decide(
            .tracked(fix(1, north: 10), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: crossing))
        let held = try #require(m.held)
        #expect(same(effects, [.storeCrossing(crossing), .persistHeld(held)]))
    }

    /// FX-6, BY-4: a check-in bypasses the gate, stores the held fix first, and wakes the upload once stored.
    @Test func aCheckInStoresTheHeldFixFirstAndWakesTheUpload() throws {
        var m = tracking(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 10))
        let e6 = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let a = try #require(
            stored(e6).first)
        m.committed(a)
        _ = m.decide(.tracked(fix(1, north: 10), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let held = try #require(m.held)
        let effects = m.decide(.checkIn(fix(2, north: -30), id: UUID()))  // back south: cannot end the segment itself
        let all = stored(effects)
        #expect(all.count == 2 && all[0] == held)
        let checkIn = all[1]
        #expect(checkIn.trigger == .checkIn && checkIn.motion == .stationary)
        var checkInThen = standard(checkIn)
        checkInThen.append(.wakeSync(.checkIn))
        let expected: [FixEffect] = [
            .store(held, crossing: nil, then: standard(held)), .store(checkIn, crossing: nil, then: checkInThen), .persistHeld(nil),
        ]
        #expect(effects == expected)
    }

    /// BY-2: a locate answer while tracking goes through the window (held fix first) and moves the gate.
    @Test func aLocateAnswerWhileTrackingStoresTheHeldFixFirst() throws {
        var m = tracking(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 10))
        let e7 = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let a = try #require(
            stored(e7).first)
        m.committed(a)
        _ = m.decide(.tracked(fix(1, north: 10), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let held = try #require(m.held)
        let id = UUID()
        let effects = m.decide(.locateAnswer(fix(3, north: -30), id: id, requestID: request, motion: .moving, idleSession: idle))
        let answer = try #require(effects.storedLocation(id))
        #expect(answer.trigger == .manual && answer.locateRequestId == request && answer.sessionId == session)
        #expect(
            same(
                effects,
                [
                    .store(held, crossing: nil, then: standard(held)), .store(answer, crossing: nil, then: standard(answer)),
                    .persistHeld(nil),
                ]))
        #expect(m.held == nil)
    }

    /// BY-2: not tracking, the answer is stored into a session of its own; the gate is left alone.
    @Test func aLocateAnswerWhenIdleIsStoredOutsideTheTrack() throws {
        var m = TrackingMachine(config: BeekonConfig())
        let id = UUID()
        let effects = m.decide(.locateAnswer(fix(0), id: id, requestID: request, motion: .unknown, idleSession: idle))
        let answer = try #require(effects.storedLocation(id))
        #expect(answer.sessionId == idle && answer.locateRequestId == request)
        #expect(same(effects, [.store(answer, crossing: nil, then: [.publish(answer), .notifySync])]))
    }

    /// BY-2: a cached reading older than the last stored fix is still the answer, but does not move the gate back.
    @Test func anOlderLocateAnswerDoesNotMoveTheGate() throws {
        var m = tracking()
        let e8 = m.decide(.tracked(fix(10), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let a = try #require(
            stored(e8).first)
        m.committed(a)
        let id = UUID()
        let effects = m.decide(.locateAnswer(fix(5), id: id, requestID: request, motion: .moving, idleSession: idle))
        let answer = try #require(effects.storedLocation(id))
        #expect(same(effects, [.store(answer, crossing: nil, then: [.publish(answer), .notifySync])]))
    }

    /// BY-9: the window closing (stop, new tolerance, stationary pause) stores the held fix and clears the marker.
    @Test func aClosedWindowStoresItsHeldFix() throws {
        var m = tracking(BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 10))
        let e9 = m.decide(.windowClosed(nil))
        #expect(same(e9, []))
        let e10 = m.decide(.tracked(fix(0), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let a = try #require(
            stored(e10).first)
        m.committed(a)
        _ = m.decide(.tracked(fix(1, north: 10), id: UUID(), motion: .moving, trigger: .interval, bypassGate: false, crossing: .none))
        let e15 = m.flushHeld()
        let held = try #require(e15)
        let e11 = m.decide(.windowClosed(held))
        #expect(same(e11, [.store(held, crossing: nil, then: standard(held)), .persistHeld(nil)]))
    }

    /// BY-9: the fix held when the process died is stored only when later than its session's last
    /// stored fix; the marker is cleared only once it is stored (or found stored already).
    @Test func aRestoredHeldFixIsStoredOnlyWhenLater() {
        var m = TrackingMachine(config: BeekonConfig())
        let held = Location(id: UUID(), sessionId: session, timestamp: t0 + 10, latitude: 48, longitude: 11)
        let e12 = m.decide(.restoredHeld(held, lastStored: nil))
        #expect(
            same(e12, [.store(held, crossing: nil, then: [.publish(held), .persistHeld(nil)])]))
        let e13 = m.decide(.restoredHeld(held, lastStored: t0 + 9))
        #expect(
            same(
                e13, [.store(held, crossing: nil, then: [.publish(held), .persistHeld(nil)])])
        )
        let e14 = m.decide(.restoredHeld(held, lastStored: t0 + 10))
        #expect(same(e14, [.persistHeld(nil)]))
    }
}
