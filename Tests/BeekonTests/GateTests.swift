import BeekonPrimitives
import BeekonWire
@testable import Beekon
import Foundation
import Testing

@Suite("Gate (FX-2)")
struct GateTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func raw(_ s: Double, north m: Double) -> RawFix {
        RawFix(timestamp: t0.addingTimeInterval(s), latitude: 48 + m / 111_195.0, longitude: 11)
    }

    @Test func firstFixAlwaysPasses() {
        let gate = Gate(minTimeSeconds: 1e9, minDistanceMeters: 1e9)
        #expect(gate.evaluate(raw(0, north: 0)) == .admit)
    }

    @Test func bothConditionsMustHold() {
        var gate = Gate(minTimeSeconds: 30, minDistanceMeters: 100)
        gate.commit(raw(0, north: 0))
        #expect(gate.evaluate(raw(29, north: 500)) == .tooSoon)  // far but too soon
        #expect(gate.evaluate(raw(300, north: 99)) == .tooClose)  // late but too close
        #expect(gate.evaluate(raw(30, north: 100.5)) == .admit)  // both exactly met
    }

    @Test func zeroDisablesEachCondition() {
        var timeOff = Gate(minTimeSeconds: 0, minDistanceMeters: 100)
        timeOff.commit(raw(0, north: 0))
        #expect(timeOff.evaluate(raw(1, north: 150)) == .admit)
        var distanceOff = Gate(minTimeSeconds: 30, minDistanceMeters: 0)
        distanceOff.commit(raw(0, north: 0))
        #expect(distanceOff.evaluate(raw(30, north: 0)) == .admit)
        #expect(distanceOff.evaluate(raw(29.999, north: 0)) == .tooSoon)
    }

    @Test func timestampsNotLaterAreRejected() {
        var gate = Gate(minTimeSeconds: 0, minDistanceMeters: 0)
        gate.commit(raw(10, north: 0))
        #expect(gate.evaluate(raw(10, north: 1000)) == .notLater)
        #expect(gate.evaluate(raw(5, north: 1000)) == .notLater)
        #expect(gate.evaluate(raw(10.001, north: 1000)) == .admit)
    }

    @Test func timeIsMeasuredBetweenFixTimestampsNotWallClock() {
        // Same fixes, evaluated "instantly" (as a max-speed replay does), admit by fix time.
        var gate = Gate(minTimeSeconds: 60, minDistanceMeters: 0)
        var admitted: [Double] = []
        for s in stride(from: 0.0, through: 600, by: 1) {
            let f = raw(s, north: s)
            if gate.evaluate(f) == .admit {
                gate.commit(f)
                admitted.append(s)
            }
        }
        #expect(admitted == Array(stride(from: 0.0, through: 600, by: 60)))
    }

    @Test func presetsHaveSpecValues() {
        #expect(Preset.saver.minTimeBetweenLocationsSeconds == 60 && Preset.saver.minDistanceBetweenLocationsMeters == 150)
        #expect(Preset.balanced.minTimeBetweenLocationsSeconds == 30 && Preset.balanced.minDistanceBetweenLocationsMeters == 100)
        #expect(Preset.precision.minTimeBetweenLocationsSeconds == 10 && Preset.precision.minDistanceBetweenLocationsMeters == 30)
        let c = BeekonConfig(preset: .saver, minDistanceBetweenLocationsMeters: 5)
        #expect(c.effectiveMinTimeSeconds == 60)
        #expect(c.effectiveMinDistanceMeters == 5)
        #expect(BeekonConfig().effectiveMinTimeSeconds == 30)
    }

    @Test func configValidationNamesTheField() {
        #expect(throws: BeekonError.self) { try BeekonConfig(minTimeBetweenLocationsSeconds: -1).validate() }
        do {
            try BeekonConfig(minDistanceBetweenLocationsMeters: .nan).validate()
            Issue.record("expected a throw")
        } catch {
            #expect("\(error)".contains("minDistanceBetweenLocationsMeters"))
        }
    }
}

@Suite("Sanitising and quality (FX-4, FX-5)")
struct FixSanitiserTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000.1237)

    @Test func nonFiniteCoordinatesNeverPass() {
        for (lat, lon) in [(Double.nan, 1.0), (1, .infinity), (91, 0), (0, -180.5)] {
            #expect(FixSanitiser.sanitise(RawFix(timestamp: t0, latitude: lat, longitude: lon)) == nil)
        }
    }

    @Test func optionalsAreDroppedNotInvented() throws {
        let f = try #require(
            FixSanitiser.sanitise(
                RawFix(
                    timestamp: t0, latitude: 1, longitude: 2, accuracy: .nan, speed: -1, bearing: 360, altitude: .infinity)))
        #expect(f.accuracy == nil && f.speed == nil && f.bearing == nil && f.altitude == nil)
        let g = try #require(
            FixSanitiser.sanitise(
                RawFix(
                    timestamp: t0, latitude: 1, longitude: 2, accuracy: 3, speed: 0, bearing: 359.9, altitude: -10)))
        #expect(g.accuracy == 3 && g.speed == 0 && g.bearing == 359.9 && g.altitude == -10)
        #expect(WireTimestamp(g.timestamp).millis == 1_700_000_000_123)
        #expect(g.timestamp.timeIntervalSince1970 * 1000 == 1_700_000_000_123)
    }

    @Test func qualityThresholds() {
        let last = GatePoint(timestamp: t0, latitude: 48, longitude: 11)
        let ok = RawFix(timestamp: t0.addingTimeInterval(10), latitude: 48 + 900 / 111_195.0, longitude: 11, accuracy: 100)
        #expect(FixSanitiser.quality(of: ok, after: last) == nil)
        var poor = ok
        poor.accuracy = 100.5
        #expect(FixSanitiser.quality(of: poor, after: last) == .lowAccuracy)
        // 1,100 m in 10 s = 110 m/s > 100 m/s.
        let fast = RawFix(timestamp: t0.addingTimeInterval(10), latitude: 48 + 1100 / 111_195.0, longitude: 11, accuracy: 500)
        #expect(FixSanitiser.quality(of: fast, after: last) == .implausibleSpeed)
        #expect(FixSanitiser.quality(of: fast, after: nil) == .lowAccuracy)
    }
}

@Suite("Turn-aware admission (opt-in)")
struct TurnAwareGateTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    func raw(_ s: Double, east: Double, north: Double, bearing: Double? = nil) -> RawFix {
        RawFix(
            timestamp: t0.addingTimeInterval(s), latitude: 48 + north / 111_195.0,
            longitude: 11 + east / (111_195.0 * cos(48 * .pi / 180)), bearing: bearing)
    }

    @Test func offByDefaultAndAdmitsEarlyOnATurn() {
        var gate = Gate(minTimeSeconds: 30, minDistanceMeters: 100)
        gate.commit(raw(0, east: 0, north: 0))
        gate.commit(raw(30, east: 0, north: 150))  // heading north
        let turned = raw(40, east: 40, north: 150)  // 40 m east, 10 s later
        #expect(gate.evaluate(turned) == .tooSoon, "the SPEC gate is unchanged by default")
        gate.turnThresholdDegrees = 30
        #expect(gate.evaluate(turned) == .turn)
        #expect(gate.evaluate(raw(40, east: 5, north: 190)) == .tooSoon, "a small heading change is not a turn")
        #expect(gate.evaluate(raw(32, east: 40, north: 150)) == .tooSoon, "the turn rule respects its minimum time")
        #expect(gate.evaluate(raw(40, east: 5, north: 150)) == .tooSoon, "too short a chord to have a heading")
    }

    @Test func reportedBearingIsPreferredOverTheChord() {
        var gate = Gate(minTimeSeconds: 30, minDistanceMeters: 100)
        gate.turnThresholdDegrees = 45
        gate.commit(raw(0, east: 0, north: 0, bearing: 0))
        #expect(gate.evaluate(raw(10, east: 0, north: 20, bearing: 90)) == .turn)
        #expect(gate.evaluate(raw(10, east: 0, north: 20, bearing: 10)) == .tooSoon)
        #expect(Geodesy.angleBetween(350, 10) == 20 && Geodesy.angleBetween(0, 180) == 180)
    }
}
