@testable import Beekon
import Foundation
import Testing

@Suite("Stationary detector (FX-6)")
struct StationaryDetectorTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// A fix at `t0 + seconds`, `east` metres east of (48, 11).
    func at(_ seconds: Double, east: Double = 0, accuracy: Double? = 3, speed: Double? = 0.2) -> RawFix {
        let p = destination(48, 11, bearingDegrees: 90, meters: east)
        return RawFix(
            timestamp: t0.addingTimeInterval(seconds), latitude: p.lat, longitude: p.lon,
            accuracy: accuracy, speed: speed, bearing: 90, altitude: 500)
    }

    /// Feeds fixes every 10 s from `from` to `to` (inclusive) at `east` metres; returns all actions.
    func dwell(_ d: inout StationaryDetector, from: Double, to: Double, east: Double = 0) -> [StationaryDetector.Action] {
        stride(from: from, through: to, by: 10).flatMap {
            d.observe(fix: at($0, east: east + ($0.truncatingRemainder(dividingBy: 20) == 0 ? 1 : -1)))
        }
    }

    @Test func defaultsAndClamping() {
        let d = StationaryDetector()
        #expect(d.policy == .pause && d.radiusMeters == 5 && d.dwellSeconds == 120 && d.checkInIntervalSeconds == 900)
        #expect(d.motion == .unknown && d.lastFix == nil)
        #expect(StationaryDetector(radiusMeters: 1).radiusMeters == 5)
        #expect(StationaryDetector(radiusMeters: 5_000).radiusMeters == 1_000)
        #expect(StationaryDetector(radiusMeters: .nan).radiusMeters == 5)
        #expect(StationaryDetector(checkInIntervalSeconds: 0).checkInIntervalSeconds == 1)
    }

    @Test func policyRawValuesAreTheConfigSpellings() throws {
        #expect(StationaryPolicy.allCases.map(\.rawValue) == ["keepTracking", "pause", "pauseWithCheckIns"])
        let decoded = try JSONDecoder().decode([StationaryPolicy].self, from: Data(#"["pauseWithCheckIns"]"#.utf8))
        #expect(decoded == [.pauseWithCheckIns])
    }

    @Test func dwellThenPauseThenResumeWithAMotionFix() {
        var d = StationaryDetector(policy: .pause)
        #expect(dwell(&d, from: 0, to: 110).isEmpty)
        #expect(d.motion == .unknown, "no departure and no full dwell yet")
        let arrive = at(120, east: 2)
        #expect(d.observe(fix: arrive) == [.becameStationary(arrive), .pauseProvider])
        #expect(d.motion == .stationary && d.providerPaused)
        #expect(dwell(&d, from: 130, to: 600).isEmpty, "jitter inside the radius changes nothing")
        #expect(d.tick(now: t0.addingTimeInterval(5_000)).isEmpty, "no check-ins under pause")
        let leave = at(610, east: 12)
        #expect(d.observe(fix: leave) == [.resumeProvider, .resumedMoving(leave)])
        #expect(d.motion == .moving && !d.providerPaused && d.anchor == leave)
        #expect(d.observe(fix: at(620, east: 14)).isEmpty)
        #expect(d.motion == .moving)
    }

    @Test func movingFixesNeverBecomeStationary() {
        var d = StationaryDetector()
        for i in 0..<100 {
            #expect(d.observe(fix: at(Double(i) * 5, east: Double(i) * 7)).isEmpty)
        }
        #expect(d.motion == .moving)
    }

    @Test func aStopResetsTheDwellWhenTheDeviceCreepsOut() {
        var d = StationaryDetector(policy: .pause, radiusMeters: 5)
        #expect(d.observe(fix: at(0, accuracy: nil)).isEmpty)
        #expect(d.observe(fix: at(100, east: 6, accuracy: nil)).isEmpty, "6 m with no accuracy is outside")
        #expect(d.motion == .moving)
        #expect(d.observe(fix: at(200, east: 14, accuracy: 4)).isEmpty, "8 m − 4 m tolerance ≤ 5 m: inside")
        let done = at(230, east: 10, accuracy: nil)
        #expect(d.observe(fix: done) == [.becameStationary(done), .pauseProvider], "120 s after the anchor at 100 s")
    }

    @Test func noisyAccuracyGetsAtMostOneRadiusOfTolerance() {
        var d = StationaryDetector(radiusMeters: 5)
        _ = d.observe(fix: at(0))
        let bad = at(130, east: 10.5, accuracy: 500)
        #expect(d.observe(fix: bad).isEmpty, "10.5 m − min(500, 5) > 5 m: outside")
        #expect(d.motion == .moving)
    }

    @Test func keepTrackingMarksStationaryWithoutPowerChanges() {
        var d = StationaryDetector(policy: .keepTracking)
        _ = dwell(&d, from: 0, to: 110)
        let arrive = at(120)
        #expect(d.observe(fix: arrive) == [.becameStationary(arrive)])
        #expect(d.tick(now: t0.addingTimeInterval(10_000)).isEmpty)
        let leave = at(300, east: 50)
        #expect(d.observe(fix: leave) == [.resumedMoving(leave)])
    }

    @Test func checkInsUseTheCachedPositionAtTheInterval() throws {
        var d = StationaryDetector(policy: .pauseWithCheckIns, checkInIntervalSeconds: 900)
        _ = dwell(&d, from: 0, to: 110)
        let arrive = at(120, east: 1)
        #expect(d.observe(fix: arrive) == [.becameStationary(arrive), .pauseProvider])
        #expect(d.nextCheckInDue == t0.addingTimeInterval(1_020))
        #expect(d.tick(now: t0.addingTimeInterval(1_019)).isEmpty)

        let first = d.tick(now: t0.addingTimeInterval(1_020))
        var expected = arrive
        expected.timestamp = t0.addingTimeInterval(1_020)
        expected.speed = nil
        expected.bearing = nil
        #expect(first == [.checkIn(expected)], "cached lat/lon/accuracy/altitude, fresh timestamp")
        #expect(d.tick(now: t0.addingTimeInterval(1_020)).isEmpty, "one check-in per slot")
        #expect(d.nextCheckInDue == t0.addingTimeInterval(1_920))

        // A late tick (the process was suspended) yields one check-in and skips the missed slots.
        let late = d.tick(now: t0.addingTimeInterval(4_000))
        #expect(late.count == 1)
        if case .checkIn(let fix)? = late.first {
            #expect(fix.timestamp == t0.addingTimeInterval(4_000))
            #expect(fix.latitude == arrive.latitude && fix.longitude == arrive.longitude)
        } else {
            Issue.record("expected a check-in")
        }
        #expect(d.nextCheckInDue == t0.addingTimeInterval(4_620))

        // A paused source may still deliver a fix inside the radius: it becomes the cached position.
        let nudge = at(4_100, east: 2)
        #expect(d.observe(fix: nudge).isEmpty)
        #expect(d.lastFix == nudge)
        if case .checkIn(let fix)? = d.tick(now: t0.addingTimeInterval(4_620)).first {
            #expect(fix.longitude == nudge.longitude)
        } else {
            Issue.record("expected a check-in")
        }

        // Departure ends the schedule.
        let leave = at(5_000, east: 40)
        #expect(d.observe(fix: leave) == [.resumeProvider, .resumedMoving(leave)])
        #expect(d.nextCheckInDue == nil)
        #expect(d.tick(now: t0.addingTimeInterval(9_000)).isEmpty)
    }

    @Test func reconfigureWhileStationaryPausesOrResumesAtOnce() {
        var d = StationaryDetector(policy: .pause)
        _ = dwell(&d, from: 0, to: 120)
        #expect(d.motion == .stationary && d.providerPaused)
        #expect(d.reconfigure(policy: .keepTracking, radiusMeters: 5, checkInIntervalSeconds: 900) == [.resumeProvider])
        #expect(!d.providerPaused && d.nextCheckInDue == nil)
        #expect(d.reconfigure(policy: .pauseWithCheckIns, radiusMeters: 50, checkInIntervalSeconds: 60) == [.pauseProvider])
        #expect(d.radiusMeters == 50)
        #expect(d.nextCheckInDue == t0.addingTimeInterval(180), "60 s after the dwell completed at 120 s")
        #expect(d.reconfigure(policy: .pauseWithCheckIns, radiusMeters: 50, checkInIntervalSeconds: 300).isEmpty)
        #expect(d.nextCheckInDue == t0.addingTimeInterval(420))
        #expect(d.reconfigure(policy: .pause, radiusMeters: 50, checkInIntervalSeconds: 300).isEmpty)
        #expect(d.nextCheckInDue == nil && d.providerPaused)
        d.reset()
        #expect(d.motion == .unknown && d.anchor == nil && d.lastFix == nil && !d.providerPaused)
        #expect(d.policy == .pause && d.radiusMeters == 50, "settings survive a reset")
    }

    @Test func fixesNotLaterThanTheLastAreIgnored() {
        var d = StationaryDetector()
        _ = d.observe(fix: at(100))
        #expect(d.observe(fix: at(50, east: 500)).isEmpty)
        #expect(d.observe(fix: at(100, east: 500)).isEmpty)
        #expect(d.motion == .unknown && d.lastFix == at(100))
    }
}
