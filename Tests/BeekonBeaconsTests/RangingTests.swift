import Foundation
import Testing
@testable import BeekonBeacons

/// Distance models, RSSI smoothing and the proximity trigger (SPEC BY-5).
@Suite struct RangingTests {
    @Test("BY-5: the curve fit gives C+A at the 1 m power and grows with B; path loss is 10^(Δ/10n)")
    func models() {
        let fit = CurveFitDistanceModel()
        #expect(abs(fit.distance(rssi: -59, measuredPower: -59) - (0.42093 + 0.54992)) < 1e-9)
        #expect(abs(fit.distance(rssi: -70, measuredPower: -59) - (0.42093 * pow(70.0 / 59, 6.9476) + 0.54992)) < 1e-9)
        #expect(fit.distance(rssi: -40, measuredPower: -59) < 0.1)
        let custom = CurveFitDistanceModel(a: 1, b: 2, c: 0)
        #expect(abs(custom.distance(rssi: -118, measuredPower: -59) - 4) < 1e-9)
        #expect(PathLossDistanceModel(exponent: 2).distance(rssi: -79, measuredPower: -59) == 10)
        #expect(abs(PathLossDistanceModel(exponent: 3).distance(rssi: -89, measuredPower: -59) - 10) < 1e-9)
    }

    @Test("BY-5: smoothing trims a reading 30 dB off, forgets readings older than the window, and is unknown with too few")
    func smoothing() {
        var s = RSSISmoother(window: 10, trimFraction: 0.2, minimumSamples: 5)
        for (i, r) in [-70.0, -70, -70, -70].enumerated() { s.add(r, at: Double(i)) }
        #expect(s.value(at: 3) == nil)
        s.add(-40, at: 4)
        #expect(s.value(at: 4) == -70)
        #expect(s.value(at: 13.5) == nil, "only the readings at 4 s… remain: too few")
        #expect(s.count == 1)
        s.reset()
        #expect(s.count == 0)
    }

    @Test("BY-5: enter only after the dwell under the enter distance, once per entry; exit beyond the exit distance or on silence")
    func trigger() {
        var t = ProximityTrigger(rule: ProximityRule(enterDistance: 1, exitDistance: 2, dwell: 3, silenceTimeout: 30))
        #expect(t.observe(distance: 0.8, at: 0) == nil)
        #expect(t.observe(distance: nil, at: 1) == nil, "unknown breaks the dwell")
        #expect(t.observe(distance: 0.8, at: 2) == nil)
        #expect(t.observe(distance: 1.5, at: 4) == nil, "back over the enter distance breaks the dwell")
        #expect(t.observe(distance: 0.9, at: 5) == nil)
        #expect(t.observe(distance: 0.9, at: 8) == .enter)
        #expect(t.observe(distance: 0.5, at: 20) == nil, "fires once per entry")
        #expect(t.observe(distance: 1.8, at: 21) == nil, "between the distances: hysteresis")
        #expect(t.observe(distance: 2.5, at: 22) == nil)
        #expect(t.observe(distance: 2.5, at: 25) == .exit)
        #expect(t.observe(distance: 0.5, at: 26) == nil)
        #expect(t.observe(distance: 0.5, at: 29) == .enter)
        #expect(t.tick(at: 58) == nil)
        #expect(t.silenceDeadline == 59)
        #expect(t.tick(at: 59) == .exit)
        #expect(t.tick(at: 100) == nil)
        #expect(ProximityRule(enterDistance: 3, exitDistance: 2).exitDistance == 3.5)
    }

    @Test("BY-5: a tracker keys by region, beacon and scanner, timestamps silence exits at the deadline, and its state round-trips")
    func tracker() throws {
        let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        let region = try #require(BeaconRegion(identifier: "pump", uuid: uuid.lowercased(), major: 1))
        let rule = ProximityRule(enterDistance: 1, exitDistance: 2, dwell: 2, silenceTimeout: 10)
        var tracker = ProximityTracker(regions: [region], rule: rule, smoother: RSSISmoother(window: 5, trimFraction: 0, minimumSamples: 2))
        let near = try #require(BeaconIdentity(uuid: uuid, major: 1, minor: 7))
        let other = try #require(BeaconIdentity(uuid: uuid, major: 2, minor: 7))
        func reading(_ id: BeaconIdentity, _ scanner: String, _ rssi: Int, _ t: Double) -> BeaconReading {
            BeaconReading(scanner: scanner, identity: id, measuredPower: -59, rssi: rssi, time: Date(timeIntervalSince1970: t))
        }
        var events: [ProximityEvent] = []
        for t in 0...4 {
            events += tracker.observe(reading(near, "a", -55, Double(t)))
            events += tracker.observe(reading(other, "a", -40, Double(t)))
            events += tracker.observe(reading(near, "b", -90, Double(t)))
        }
        #expect(events.map(\.type) == [.enter])
        #expect(events.first?.scanner == "a" && events.first?.region == "pump" && events.first?.timestamp == Date(timeIntervalSince1970: 3))
        let saved = try JSONEncoder().encode(tracker.state)
        var resumed = ProximityTracker(regions: [region], rule: rule, smoother: RSSISmoother(window: 5, trimFraction: 0, minimumSamples: 2))
        resumed.state = try JSONDecoder().decode(ProximityTrackerState.self, from: saved)
        #expect(resumed.state == tracker.state)
        let exits = resumed.observe(reading(near, "b", -90, 20))
        #expect(exits.map(\.type) == [.exit])
        #expect(exits.first?.timestamp == Date(timeIntervalSince1970: 14) && exits.first?.distance == nil)
    }
}
