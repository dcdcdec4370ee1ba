// P6: geofence evaluation per fix with 1k / 10k / 100k fences — the SDK's GeofenceEngine
// (grid index + hysteresis) versus a brute-force scan applying the same enter/exit rules
// to every fence, in the same run, on the same fixes (a 1 Hz walk through a city-sized
// cloud of 50–500 m fences, seeded).

import Beekon
import BeekonPrimitives
import Foundation
import BeekonTesting

/// The baseline: every fence, every fix, the same rules as the engine.
struct BruteForceFences {
    var fences: [Geofence]
    var inside: Set<String> = []

    mutating func evaluate(latitude: Double, longitude: Double, accuracy: Double?) -> Int {
        let h = GeofenceEngine.margin(accuracy: accuracy)
        var crossings = 0
        for f in fences {
            let d = Geodesy.distance(latitude, longitude, f.latitude, f.longitude)
            if inside.contains(f.id) {
                if GeofenceEngine.exits(distance: d, radius: f.radiusMeters, margin: h) {
                    inside.remove(f.id)
                    crossings += 1
                }
            } else if GeofenceEngine.enters(distance: d, radius: f.radiusMeters, margin: h) {
                inside.insert(f.id)
                crossings += 1
            }
        }
        return crossings
    }
}

func p6(runs: Int) -> [Comparison] {
    var rng = SeededRandom(seed: 42)
    let centre = (48.137, 11.575)
    let metresPerDegLat = 111_195.0
    let metresPerDegLon = 111_195.0 * cos(centre.0 * .pi / 180)
    // A 2,000-fix walk (1 Hz, ~1.4 m/s, meandering) through the city.
    var walk: [(Double, Double, Double)] = []
    var (lat, lon, heading) = (centre.0, centre.1, 0.0)
    for _ in 0..<size(2000, tiny: 100) {
        heading += Double.random(in: -0.3...0.3, using: &rng)
        lat += 1.4 * cos(heading) / metresPerDegLat
        lon += 1.4 * sin(heading) / metresPerDegLon
        walk.append((lat, lon, Double.random(in: 3...30, using: &rng)))
    }
    var results: [Comparison] = []
    for count in [1_000, 10_000, 100_000] {
        let fences = (0..<count).map { i in
            Geofence(
                id: "f\(i)",
                latitude: centre.0 + Double.random(in: -25_000...25_000, using: &rng) / metresPerDegLat,
                longitude: centre.1 + Double.random(in: -25_000...25_000, using: &rng) / metresPerDegLon,
                radiusMeters: Double.random(in: 50...500, using: &rng))
        }
        var ours: [Double] = []
        var base: [Double] = []
        var crossingsOurs = 0
        var crossingsBase = 0
        let baseFixes = min(walk.count, count >= 100_000 ? 200 : 2000)  // brute force at 100k is slow: fewer fixes, per-fix figure
        for _ in 0..<runs {
            var engine = GeofenceEngine(fences: fences, insideIDs: [])
            let t0 = ContinuousClock.now
            var n = 0
            for (i, p) in walk.enumerated() {
                n +=
                    engine.evaluateCrossings(
                        latitude: p.0, longitude: p.1, accuracy: p.2,
                        timestamp: Date(timeIntervalSince1970: Double(i)), makeID: { UUID() }
                    ).events.count
            }
            ours.append((ContinuousClock.now - t0).seconds / Double(walk.count) * 1e6)
            crossingsOurs = n
            var brute = BruteForceFences(fences: fences)
            let t1 = ContinuousClock.now
            var m = 0
            for p in walk.prefix(baseFixes) { m += brute.evaluate(latitude: p.0, longitude: p.1, accuracy: p.2) }
            base.append((ContinuousClock.now - t1).seconds / Double(baseFixes) * 1e6)
            crossingsBase = m
        }
        let o = Stats(ours)
        let b = Stats(base)
        results.append(
            Comparison(
                id: "P6-\(count / 1000)k", what: "geofence evaluation per fix, \(count) fences (index vs brute force)",
                unit: "µs/fix", ours: o, baseline: b, ratio: o.median / b.median,
                details: [
                    "fixes": "\(walk.count)", "baseline_fixes": "\(baseFixes)",
                    "crossings": "\(crossingsOurs)", "baseline_crossings_prefix": "\(crossingsBase)",
                ]))
    }
    return results
}
