@testable import Beekon
import BeekonPrimitives
import Foundation
import Testing
import BeekonTesting

/// The engine (grid index, chord pre-check, slot bookkeeping) against a reference that
/// applies the hysteresis rules to every fence with `Geodesy.distance`, fix by fix.
@Suite("Geofence engine vs brute force (GF-3, GF-4)")
struct GeofenceEngineBruteForceTests {
    /// The rules of GF-3 over every fence, with no index and no shortcuts.
    struct Reference {
        var fences: [String: Geofence] = [:]
        var inside: Set<String> = []

        mutating func add(_ fs: [Geofence]) {
            for f in fs {
                if let old = fences[f.id], !old.hasSameRegion(as: f) { inside.remove(f.id) }
                fences[f.id] = f
            }
        }

        mutating func remove(_ ids: [String]) {
            for id in ids {
                fences[id] = nil
                inside.remove(id)
            }
        }

        /// Exits then enters, each sorted by id; `changes` as the engine reports them.
        mutating func evaluate(_ lat: Double, _ lon: Double, accuracy: Double?)
            -> (events: [String], changes: [String: Bool])
        {
            let h = GeofenceEngine.margin(accuracy: accuracy)
            var exits: [String] = []
            var enters: [String] = []
            for f in fences.values {
                let d = Geodesy.distance(lat, lon, f.latitude, f.longitude)
                if inside.contains(f.id) {
                    if d > f.radiusMeters + h { exits.append(f.id) }
                } else if d <= f.radiusMeters - min(h, f.radiusMeters / 2) {
                    enters.append(f.id)
                }
            }
            var events: [String] = []
            var changes: [String: Bool] = [:]
            for id in exits.sorted() {
                inside.remove(id)
                changes[id] = false
                if fences[id]!.notifyOnExit { events.append("exit \(id)") }
            }
            for id in enters.sorted() {
                inside.insert(id)
                changes[id] = true
                if fences[id]!.notifyOnEntry { events.append("enter \(id)") }
            }
            return (events, changes)
        }
    }

    static let accuracies: [Double?] = [nil, 0, 3, 5, 12, 30, 65, 500, 5_000, .infinity]

    @Test func randomWalksAddsRemovesAndBoundaryFixesMatchBruteForce() throws {
        var rng = SeededRandom(seed: 20_261_122)
        let city = (lat: 48.137, lon: 11.575)
        var engine = GeofenceEngine()
        var reference = Reference()
        var nextID = 0
        func newFence(_ lat: Double, _ lon: Double, _ radius: Double) -> Geofence {
            nextID += 1
            return Geofence(
                id: "g\(nextID % 4_000)", latitude: lat, longitude: lon, radiusMeters: radius,
                notifyOnEntry: Double.random(in: 0..<1, using: &rng) < 0.8,
                notifyOnExit: Double.random(in: 0..<1, using: &rng) < 0.8)
        }
        // A dense city, a scatter over the world (some huge), and fences at the antimeridian and a pole.
        var initial: [Geofence] = []
        for _ in 0..<6_000 {
            let p = destination(
                city.lat, city.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                meters: .random(in: 0...8_000, using: &rng))
            initial.append(newFence(p.lat, p.lon, .random(in: 5...600, using: &rng)))
        }
        for _ in 0..<500 {
            let f = GeofenceIndexTests.randomFence(0, using: &rng)
            initial.append(newFence(f.latitude, f.longitude, f.radiusMeters))
        }
        for hot in [(lat: 0.0, lon: 180.0), (lat: 89.99, lon: 0.0)] {
            for _ in 0..<200 {
                let p = destination(
                    hot.lat, hot.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                    meters: .random(in: 0...3_000, using: &rng))
                initial.append(newFence(p.lat, p.lon, .random(in: 5...2_000, using: &rng)))
            }
        }
        try engine.add(initial)
        reference.add(initial)

        var position = city
        var crossings = 0
        var boundaryFixes = 0
        for step in 0..<3_000 {
            let accuracy = Self.accuracies.randomElement(using: &rng)!
            let h = GeofenceEngine.margin(accuracy: accuracy)
            switch Int.random(in: 0..<20, using: &rng) {
            case 0:  // a jump: elsewhere in the city, or to a hot spot
                let hot = [city, (lat: 0.0, lon: 180.0), (lat: 89.99, lon: 0.0)].randomElement(using: &rng)!
                position = destination(
                    hot.lat, hot.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                    meters: .random(in: 0...3_000, using: &rng))
            case 1...6:  // exactly at (or a hair off) a rule's threshold of a random live fence
                guard let f = reference.fences.values.randomElement(using: &rng) else { continue }
                let r = f.radiusMeters
                let edge = Bool.random(using: &rng) ? r - min(h, r / 2) : r + h
                let off = [0, 1e-9, -1e-9, 1e-6, -1e-6, 1e-3, -1e-3, 0.5, -0.5].randomElement(using: &rng)!
                position = destination(
                    f.latitude, f.longitude, bearingDegrees: .random(in: 0..<360, using: &rng),
                    meters: max(0, edge + off))
                boundaryFixes += 1
            case 7:  // a fence placed so this fix lies exactly on one of its thresholds
                let d = Double.random(in: 1...400, using: &rng)
                let c = destination(position.lat, position.lon, bearingDegrees: .random(in: 0..<360, using: &rng), meters: d)
                let exact = Geodesy.distance(position.lat, position.lon, c.lat, c.lon)
                let radius = Bool.random(using: &rng) ? exact - h : exact + min(h, exact)
                if radius > 0 {
                    let f = newFence(c.lat, c.lon, radius)
                    try engine.add([f])
                    reference.add([f])
                }
            case 8:  // remove some fences (and an unknown id)
                let victims = (0..<3).compactMap { _ in reference.fences.keys.randomElement(using: &rng) } + ["nope"]
                engine.remove(ids: victims)
                reference.remove(victims)
            case 9:  // re-add a live fence: same region (keeps state) or moved (resets it)
                guard var f = reference.fences.values.randomElement(using: &rng) else { continue }
                if Bool.random(using: &rng) { f.radiusMeters *= 1.01 }
                f.notifyOnExit.toggle()
                try engine.add([f])
                reference.add([f])
            default:  // walk on
                position = destination(
                    position.lat, position.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                    meters: .random(in: 0...40, using: &rng))
            }
            var ids = 0
            let got = engine.evaluateCrossings(
                latitude: position.lat, longitude: position.lon, accuracy: accuracy,
                timestamp: Date(timeIntervalSince1970: Double(step))
            ) {
                ids += 1
                return UUID()
            }
            let want = reference.evaluate(position.lat, position.lon, accuracy: accuracy)
            #expect(
                got.events.map { "\($0.transition == .enter ? "enter" : "exit") \($0.geofenceId)" } == want.events,
                "step \(step) at \(position)")
            #expect(got.stateChanges == want.changes, "step \(step)")
            #expect(ids == want.events.count)
            crossings += want.changes.count
            if step % 100 == 0 { #expect(engine.insideIDs == reference.inside, "step \(step)") }
        }
        #expect(engine.insideIDs == reference.inside)
        #expect(engine.count == reference.fences.count)
        #expect(crossings > 500 && boundaryFixes > 500, "the walk really crosses fences (\(crossings), \(boundaryFixes))")

        // A restored engine carries on exactly like the one it was saved from.
        var restored = GeofenceEngine(fences: engine.list(), insideIDs: engine.insideIDs)
        for _ in 0..<200 {
            position = destination(
                position.lat, position.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                meters: .random(in: 0...300, using: &rng))
            let a = engine.evaluateCrossings(
                latitude: position.lat, longitude: position.lon, accuracy: 10,
                timestamp: Date(timeIntervalSince1970: 0), makeID: { UUID() })
            let b = restored.evaluateCrossings(
                latitude: position.lat, longitude: position.lon, accuracy: 10,
                timestamp: Date(timeIntervalSince1970: 0), makeID: { UUID() })
            #expect(a.stateChanges == b.stateChanges)
        }
    }

    /// The chord pre-check never disagrees with `Geodesy.distance(…) <= limit`, from
    /// millimetres to antipodes, including limits equal to the computed distance.
    @Test func chordPreCheckAgreesWithHaversine() {
        var rng = SeededRandom(seed: 314)
        var decided = 0
        var total = 0
        for _ in 0..<200_000 {
            let u = Double.random(in: -1...1, using: &rng)
            let lat: Double = asin(u) * 180 / .pi
            let lon = Double.random(in: -180...180, using: &rng)
            let meters = exp(Double.random(in: log(1e-4)...log(2.0e7), using: &rng))
            let q = destination(lat, lon, bearingDegrees: .random(in: 0..<360, using: &rng), meters: meters)
            let d = Geodesy.distance(lat, lon, q.lat, q.lon)
            let c2 = SphereChord.Point(latitude: lat, longitude: lon)
                .chordSquared(to: SphereChord.Point(latitude: q.lat, longitude: q.lon))
            let limits: [Double] = [d, d.nextUp, d.nextDown, d + 1e-6, d - 1e-6, d * 1.001, d * 0.999, d + 2, d - 2, d * 2, d / 2, 0, -1]
            for limit in limits {
                total += 1
                guard let answer = SphereChord.isWithin(chordSquared: c2, limit: limit) else { continue }
                decided += 1
                #expect(answer == (d <= limit), "d \(d) limit \(limit)")
            }
        }
        #expect(decided > total / 3, "the pre-check decides most comparisons (\(decided) of \(total))")
    }
}
