// P6-page: the Apple region pager (GF-4, BY-10) — time to re-page the 20 OS region slots
// (the 19 fences nearest by edge distance + the refresh region) with 100,000 fences, versus
// a brute-force scan of every fence for the same 20, on the same positions (a straight
// ~78 km walk through a seeded 200 × 200 km cloud of 50–300 m fences). Target: < 1 ms.

import Beekon
import BeekonPrimitives
import Foundation
import BeekonTesting

func p6Paging(runs: Int) -> [Comparison] {
    var rng = SeededRandom(seed: 7)
    func unit() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }
    let fences = (0..<100_000).map { n in
        Geofence(id: "f\(n)", latitude: 44.1 + unit() * 1.8, longitude: 12.7 + unit() * 2.6, radiusMeters: 50 + unit() * 250)
    }
    let positions = (0..<size(2000, tiny: 40)).map { (45.0, 13.0 + Double($0) * 0.0005) }
    let pager = RegionPager(fences: fences)
    var ours: [Double] = []
    var base: [Double] = []
    var agree = 0
    for _ in 0..<runs {
        var sink = 0.0
        let t0 = ContinuousClock.now
        for p in positions { sink += pager.page(latitude: p.0, longitude: p.1).refresh.radiusMeters }
        ours.append((ContinuousClock.now - t0).seconds / Double(positions.count) * 1e6)
        let baseCount = size(100, tiny: 10)
        let t1 = ContinuousClock.now
        agree = 0
        for p in positions.prefix(baseCount) {
            let nearest = bruteNearest(fences, 20, p.0, p.1)
            if Set(nearest.prefix(19)) == Set(pager.page(latitude: p.0, longitude: p.1).fences.map(\.id)) { agree += 1 }
        }
        base.append((ContinuousClock.now - t1).seconds / Double(baseCount) * 1e6)
        if sink < 0 { print(sink) }
    }
    let o = Stats(ours)
    let b = Stats(base)
    return [
        Comparison(
            id: "P6-page-100k", what: "Apple region re-page (19 nearest + refresh region), 100000 fences (grid vs scan)",
            unit: "µs/re-page", ours: o, baseline: b, ratio: o.median / b.median,
            details: [
                "positions": "\(positions.count)", "baseline_positions": "\(size(100, tiny: 10))",
                "same_19": "\(agree)/\(size(100, tiny: 10))", "target": "< 1000 µs",
            ])
    ]
}

/// The baseline: the `count` fences nearest by edge distance, scanning every fence.
private func bruteNearest(_ fences: [Geofence], _ count: Int, _ lat: Double, _ lon: Double) -> [String] {
    var best: [(String, Double)] = []
    for f in fences {
        let e = Geodesy.distance(lat, lon, f.latitude, f.longitude) - f.radiusMeters
        if best.count == count, e >= best[count - 1].1 { continue }
        best.insert((f.id, e), at: best.firstIndex { $0.1 > e } ?? best.count)
        if best.count > count { best.removeLast() }
    }
    return best.map(\.0)
}
