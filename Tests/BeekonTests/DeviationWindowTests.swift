@testable import Beekon
import BeekonTestSupport
import Foundation
import Logging
import Testing
import BeekonTesting

/// A seeded random walk: 1 Hz with gaps, turns, U-turns, speed changes, stops with jitter.
func randomWalk(seed: UInt64, count: Int) -> [RawFix] {
    var rng = SeededRandom(seed: seed)
    var lat = Double.random(in: -60...60, using: &rng)
    var lon = Double.random(in: -179...179, using: &rng)
    var heading = Double.random(in: 0..<360, using: &rng)
    var speed = 10.0
    var t = Date(timeIntervalSince1970: 1_767_225_600 - 7200)  // near TestClock's start: no age prune
    var out: [RawFix] = []
    for _ in 0..<count {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<8: heading += Double.random(in: -40...40, using: &rng)
        case 8: heading += 180  // U-turn
        case 9..<12: speed = Double.random(in: 0...35, using: &rng)
        case 12..<14: speed = 0  // a stop
        default: heading += Double.random(in: -3...3, using: &rng)
        }
        let dt = Int.random(in: 0..<50, using: &rng) == 0 ? Double.random(in: 2...120, using: &rng) : 1
        t += dt
        let step = speed * dt
        let h = heading * .pi / 180
        lat += step * cos(h) / 111_195
        lon += step * sin(h) / (111_195 * cos(lat * .pi / 180))
        let jitter = Double.random(in: 0...4, using: &rng)
        let jh = Double.random(in: 0..<(2 * .pi), using: &rng)
        out.append(
            RawFix(
                timestamp: t, latitude: lat + jitter * cos(jh) / 111_195,
                longitude: lon + jitter * sin(jh) / (111_195 * cos(lat * .pi / 180)), accuracy: 5))
    }
    return out
}

/// The largest distance from `fixes` to the polyline through `stored` (spherical, metres).
func maxDeviation(_ fixes: [RawFix], _ stored: [Location]) -> Double {
    TrackDeviation.distances(
        from: fixes.map { ($0.latitude, $0.longitude) },
        to: stored.map { ($0.latitude, $0.longitude) }
    ).max() ?? 0
}

@Suite("Error-bounded admission window (BY-9)")
struct DeviationWindowTests {
    let session = UUID()

    func location(_ f: RawFix) -> Location {
        Location(id: UUID(), sessionId: session, timestamp: f.timestamp, latitude: f.latitude, longitude: f.longitude)
    }

    /// Feeds every fix (a few forced, as crossings would be) and flushes at the end.
    func run(_ fixes: [RawFix], _ window: inout DeviationWindow, forceEvery: Int = 0) -> [Location] {
        var stored: [Location] = []
        for (i, f) in fixes.enumerated() {
            stored += window.offer(location(f), force: forceEvery > 0 && i % forceEvery == forceEvery - 1)
        }
        if let last = window.flush() { stored.append(last) }
        return stored
    }

    @Test(arguments: 1...40)
    func everyFixOfARandomWalkIsWithinTheTolerance(seed: Int) {
        let fixes = randomWalk(seed: UInt64(seed), count: 1500)
        let tolerance = [2.0, 5, 10, 25, 50, 200][seed % 6]
        var window = DeviationWindow(toleranceMeters: tolerance, maxIntervalSeconds: 300, anchor: nil)
        let stored = run(fixes, &window, forceEvery: seed % 3 == 0 ? 97 : 0)
        #expect(maxDeviation(fixes, stored) <= tolerance, "seed \(seed), ε \(tolerance)")
        #expect(stored.first?.timestamp == fixes.first?.timestamp, "the first fix is stored")
        #expect(stored.last?.timestamp == fixes.last?.timestamp, "a flush stores the last fix")
        #expect(zip(stored, stored.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
        if tolerance >= 10 { #expect(stored.count < fixes.count / 2, "it compresses: \(stored.count) of \(fixes.count)") }
    }

    @Test(arguments: 1...10)
    func noFixIsHeldPastTheMaximumIntervalOrTheWindowCap(seed: Int) {
        let fixes = randomWalk(seed: UInt64(100 + seed), count: 1200)
        var window = DeviationWindow(toleranceMeters: 50, maxIntervalSeconds: 60, maxFixes: 40, anchor: nil)
        let stored = run(fixes, &window)
        #expect(maxDeviation(fixes, stored) <= 50)
        for (a, b) in zip(stored, stored.dropFirst()) {
            let between = fixes.filter { $0.timestamp > a.timestamp && $0.timestamp < b.timestamp }
            #expect(between.count <= 39, "the maxFixes-th fix after a stored one is stored itself")
            #expect(
                between.allSatisfy { $0.timestamp.timeIntervalSince(a.timestamp) < 60 },
                "the first fix 60 s after a stored one is stored itself")
        }
    }

    @Test func aStraightLineKeepsOnlyItsEndsAndTheLivenessFixes() {
        let fixes = (0..<600).map { i in
            RawFix(
                timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(i)),
                latitude: 48 + Double(i) * 10 / 111_195, longitude: 11)
        }
        var window = DeviationWindow(toleranceMeters: 5, maxIntervalSeconds: 200, anchor: nil)
        let stored = run(fixes, &window)
        #expect(stored.map { Int($0.timestamp.timeIntervalSince1970 - 1_700_000_000) } == [0, 200, 400, 599])
    }

    @Test func aForcedFixThatCannotEndTheSegmentStoresTheHeldOneFirst() {
        var window = DeviationWindow(toleranceMeters: 5, maxIntervalSeconds: 300, anchor: nil)
        let t = Date(timeIntervalSince1970: 1_700_000_000)
        let a = location(RawFix(timestamp: t, latitude: 48, longitude: 11))
        let b = location(RawFix(timestamp: t + 10, latitude: 48.001, longitude: 11))
        let c = location(RawFix(timestamp: t + 20, latitude: 48.001, longitude: 11.002))  // a right-angle turn
        #expect(window.offer(a) == [a])
        #expect(window.offer(b).isEmpty)
        #expect(window.held == b)
        #expect(window.offer(c, force: true) == [b, c])
        #expect(window.held == nil && window.anchor?.timestamp == c.timestamp)
    }

    @Test func theHeldFixSurvivesTheStoreWithEveryField() async throws {
        let dir = TempDir()
        let store = try LocationStore(path: dir.db, logger: Logger(label: "test"))
        let full = Location(
            id: UUID(), sessionId: session, timestamp: Date(timeIntervalSince1970: 1_767_225_600.123),
            latitude: 48.123456789012, longitude: -11.000000000001, accuracy: 3.25, speed: 1.5,
            bearing: 359.5, altitude: -12.75, trigger: .motion, motion: .moving, isMock: true,
            activity: .walking, quality: .lowAccuracy)
        let bare = Location(
            id: UUID(), sessionId: session, timestamp: Date(timeIntervalSince1970: 1_767_225_601),
            latitude: 0, longitude: 0)
        for l in [full, bare] {
            try await store.setHeldFix(l)
            #expect(try await store.heldFix() == l)
        }
        try await store.setHeldFix(nil)
        #expect(try await store.heldFix() == nil)
    }

    /// The machine closes the window before anything else on stop and on a new tolerance.
    @Test func stopAndANewToleranceStoreTheHeldFixFirst() throws {
        let config = BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: 10)
        var machine = TrackingMachine(config: config)
        _ = machine.start(session: session, resumeFrom: nil)
        let t = Date(timeIntervalSince1970: 1_767_225_600)
        func admitted(_ s: Double, _ north: Double) throws -> Location {
            let raw = RawFix(timestamp: t + s, latitude: 48 + north / 111_195, longitude: 11)
            guard case .admit(let l) = machine.decide(raw, id: UUID()) else { throw CancellationError() }
            return l
        }
        let a = try admitted(0, 0)
        let b = try admitted(1, 10)
        #expect(machine.admit(a, force: false) == [a])
        #expect(machine.admit(b, force: false).isEmpty)
        #expect(
            machine.decide(RawFix(timestamp: t + 1, latitude: 48, longitude: 11), id: UUID()) == .rejected(.notLater),
            "not later than the held fix")
        var relaxed = config
        relaxed.maxDeviationMeters = 50
        #expect(machine.configure(relaxed) == [.store(b)])
        let c = try admitted(2, 20)
        #expect(machine.admit(c, force: false).isEmpty)
        #expect(machine.stop(.user).first == .store(c))
        #expect(machine.held == nil)
    }
}
