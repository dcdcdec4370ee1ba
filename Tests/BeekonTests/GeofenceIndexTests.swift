@testable import Beekon
import Foundation
import Testing
import BeekonTesting

@Suite("Geofence spatial index vs brute force (GF-4)")
struct GeofenceIndexTests {
    /// A random fence: mostly 10 m – 5 km, some up to thousands of kilometres.
    static func randomFence(
        _ id: Int, near: (lat: Double, lon: Double)? = nil, spread: Double = 0,
        using rng: inout SeededRandom
    ) -> Geofence {
        let lat: Double
        let lon: Double
        if let near {
            let p = destination(
                near.lat, near.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                meters: .random(in: 0...spread, using: &rng))
            (lat, lon) = (p.lat, p.lon)
        } else {
            lat = asin(.random(in: -1...1, using: &rng)) * 180 / .pi  // uniform on the sphere
            lon = .random(in: -180...180, using: &rng)
        }
        let roll = Double.random(in: 0..<1, using: &rng)
        let radius =
            roll < 0.98
            ? exp(Double.random(in: log(10.0)...log(5_000.0), using: &rng))
            : roll < 0.999 ? .random(in: 5_000...500_000, using: &rng) : .random(in: 500_000...8_000_000, using: &rng)
        return Geofence(id: "f\(id)", latitude: lat, longitude: lon, radiusMeters: radius)
    }

    /// Query points: near fence edges (so answers are not empty), plus the awkward places.
    static func queryPoints(_ fences: [Geofence], count: Int, using rng: inout SeededRandom) -> [(Double, Double)] {
        var points: [(Double, Double)] = [
            (90, 0), (-90, 0), (90, 180), (-90, -180), (0, 180), (0, -180), (89.9999, 179.9999),
            (-89.9999, -179.9999), (45, 180), (45, -180), (0, 0),
        ]
        while points.count < count {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0, 1:
                let f = fences.randomElement(using: &rng)!
                let p = destination(
                    f.latitude, f.longitude, bearingDegrees: .random(in: 0..<360, using: &rng),
                    meters: f.radiusMeters * .random(in: 0.9...1.1, using: &rng))
                points.append(p)
            case 2:
                points.append(
                    (.random(in: -90...90, using: &rng), (Bool.random(using: &rng) ? 1 : -1) * .random(in: 179.9...180, using: &rng)))
            default:
                points.append(
                    ((Bool.random(using: &rng) ? 1 : -1) * .random(in: 89.9...90, using: &rng), .random(in: -180...180, using: &rng)))
            }
        }
        return points
    }

    func expectSame(_ index: GeofenceIndex, _ scan: GeofenceScan, _ points: [(Double, Double)], extra: Double) -> Int {
        var hits = 0
        for (lat, lon) in points {
            let got = index.ids(within: extra, ofLatitude: lat, longitude: lon)
            let want = scan.ids(within: extra, ofLatitude: lat, longitude: lon)
            #expect(got == want, "at \(lat), \(lon)")
            hits += want.count
        }
        return hits
    }

    @Test func matchesBruteForceOn100kFencesWorldwide() {
        var rng = SeededRandom(seed: 2026)
        var index = GeofenceIndex(marginMeters: 60)
        var all: [Geofence] = []
        for i in 0..<100_000 {
            let f = Self.randomFence(i, using: &rng)
            all.append(f)
            index.insert(f)
        }
        let scan = GeofenceScan(all)
        #expect(index.count == 100_000)
        let points = Self.queryPoints(all, count: 250, using: &rng)
        let hits = expectSame(index, scan, points, extra: 60)
        #expect(hits > 250, "the points really hit fences (\(hits))")
        _ = expectSame(index, scan, Array(points.prefix(50)), extra: 0)
    }

    @Test func matchesBruteForceAtTheAntimeridianAndThePoles() {
        var rng = SeededRandom(seed: 99)
        var index = GeofenceIndex(marginMeters: 30)
        var all: [Geofence] = []
        let hotspots: [(lat: Double, lon: Double)] = [(0, 180), (60, -180), (-45, 179.999), (89.99, 0), (-89.99, 120), (90, 0)]
        for i in 0..<12_000 {
            let f = Self.randomFence(i, near: hotspots[i % hotspots.count], spread: 30_000, using: &rng)
            all.append(f)
            index.insert(f)
        }
        let scan = GeofenceScan(all)
        var points = Self.queryPoints(all, count: 700, using: &rng)
        for h in hotspots {
            for _ in 0..<50 {
                points.append(
                    destination(
                        h.lat, h.lon, bearingDegrees: .random(in: 0..<360, using: &rng),
                        meters: .random(in: 0...35_000, using: &rng)))
            }
        }
        let hits = expectSame(index, scan, points, extra: 30)
        #expect(hits > 500)
    }

    @Test func insertRemoveAndReplaceStayInStepWithBruteForce() {
        var rng = SeededRandom(seed: 5)
        var index = GeofenceIndex(marginMeters: 0)
        var scan = GeofenceScan()
        var live: [Geofence] = []
        for step in 0..<6_000 {
            let op = Int.random(in: 0..<10, using: &rng)
            if op < 6 || live.isEmpty {
                // Ids repeat, so some inserts replace an existing fence.
                let f = Self.randomFence(Int.random(in: 0..<3_000, using: &rng), near: (52, 0), spread: 50_000, using: &rng)
                index.insert(f)
                scan.insert(f)
                live.removeAll { $0.id == f.id }
                live.append(f)
            } else {
                let victim = op < 9 ? live.remove(at: Int.random(in: 0..<live.count, using: &rng)).id : "unknown-\(step)"
                index.remove(id: victim)
                scan.remove(id: victim)
            }
        }
        #expect(index.count == scan.fencesByID.count)
        #expect(Set(index.fences.map(\.id)) == Set(scan.fencesByID.keys))
        let points = Self.queryPoints(live, count: 1_000, using: &rng)
        _ = expectSame(index, scan, points, extra: 0)
        for f in live { index.remove(id: f.id) }
        #expect(index.count == 0 && index.candidates(latitude: 52, longitude: 0).isEmpty)
    }

    @Test func candidatesAreFewForSmallFences() {
        var rng = SeededRandom(seed: 11)
        var index = GeofenceIndex()
        for i in 0..<100_000 {
            let p = destination(
                48, 11, bearingDegrees: .random(in: 0..<360, using: &rng),
                meters: .random(in: 0...50_000, using: &rng))
            index.insert(Geofence(id: "c\(i)", latitude: p.lat, longitude: p.lon, radiusMeters: .random(in: 50...300, using: &rng)))
        }
        let n = index.candidates(latitude: 48.01, longitude: 11.01).count
        #expect(n < 500, "a city-dense grid cell holds a few hundred candidates at most (got \(n))")
    }
}
