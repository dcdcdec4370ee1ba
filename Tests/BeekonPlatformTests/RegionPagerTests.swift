@testable import Beekon
import BeekonPrimitives
import Foundation
import Testing

/// OS region paging for any number of geofences (GF-4, BY-10): the nearest fences always
/// occupy the 19 fence slots after a re-page, a fence cannot be entered unmonitored while
/// inside the refresh region, and the slot churn per kilometre is bounded and measured.
@Suite("Region pager")
struct RegionPagerTests {
    /// 100,000 fences (radius 50–300 m) spread over ~200 × 200 km around 45° N 14° E.
    /// Placed by the R2 low-discrepancy sequence: deterministic and evenly spread.
    static let fences: [Geofence] = (0..<100_000).map { n in
        func frac(_ x: Double) -> Double { x - x.rounded(.down) }
        let k = Double(n + 1)
        return Geofence(
            id: "f\(n)", latitude: 44.1 + frac(0.5 + k * 0.754_877_666_246_692_7) * 1.8,
            longitude: 12.7 + frac(0.5 + k * 0.569_840_290_998_053_2) * 2.6,
            radiusMeters: 50 + frac(k * 0.618_033_988_749_894_8) * 250)
    }

    static func edge(_ f: Geofence, _ lat: Double, _ lon: Double) -> Double {
        Geodesy.distance(lat, lon, f.latitude, f.longitude) - f.radiusMeters
    }

    /// The `count` nearest fences by edge distance, by brute force (independent of the pager).
    static func nearest(_ count: Int, _ lat: Double, _ lon: Double) -> [(String, Double)] {
        var best: [(String, Double)] = []
        for f in fences {
            let e = edge(f, lat, lon)
            if best.count == count, e >= best[count - 1].1 { continue }
            best.insert((f.id, e), at: best.firstIndex { $0.1 > e } ?? best.count)
            if best.count > count { best.removeLast() }
        }
        return best
    }

    @Test func aWalkAcrossAHundredThousandFences() {
        var paging = RegionPaging(fences: Self.fences, slots: RegionPager.osSlots)  // the pager alone: 19 fences + refresh
        var monitored: Set<String> = []
        var churn = 0
        var repages = 0
        var clampedPages = 0
        let steps = 2000
        let stepDegrees = 0.0005  // 2,000 × ~39 m eastwards ≈ 78 km
        let lat = 45.0
        var refreshRadius = 0.0
        let corridor = Self.fences.filter { abs($0.latitude - lat) < 0.01 }
        for step in 0...steps {
            let lon = 13.0 + Double(step) * stepDegrees
            if let change = paging.observe(latitude: lat, longitude: lon) {
                repages += 1
                churn += change.churn
                monitored.subtract(change.remove)
                monitored.formUnion(change.add.map(\.id))
                #expect(monitored.count <= RegionPager.osSlots - 1)
                // The nearest 19 by edge distance (brute force over all 100,000) are monitored.
                let nearest = Self.nearest(20, lat, lon)
                #expect(monitored == Set(nearest.prefix(19).map(\.0)))
                refreshRadius = change.refresh.radiusMeters
                if refreshRadius == RegionPager.minimumRefreshRadiusMeters { clampedPages += 1 }
                #expect(abs(refreshRadius - min(50_000, max(150, nearest[19].1))) < 1e-6)
            } else if refreshRadius > RegionPager.minimumRefreshRadiusMeters, step % 10 == 0 {
                // Inside the refresh region: no unmonitored fence contains the device.
                let inside = corridor.filter { abs($0.longitude - lon) < 0.01 && Self.edge($0, lat, lon) <= 0 }
                #expect(inside.allSatisfy { monitored.contains($0.id) })
            }
        }
        let km = Geodesy.distance(lat, 13.0, lat, 13.0 + Double(steps) * stepDegrees) / 1000
        let perKm = Double(churn) / km
        print(
            "region pager: \(repages) re-pages over \(String(format: "%.1f", km)) km, slot churn \(churn) (\(String(format: "%.1f", perKm))/km), \(clampedPages) pages at the 150 m floor"
        )
        #expect(repages >= 2)
        // Bounded: a re-page changes at most 2 × 19 slots, and re-pages are at least 150 m apart.
        #expect(Double(repages) <= km * 1000 / RegionPager.minimumRefreshRadiusMeters + 1)
        #expect(perKm < 40)
    }

    @Test func fewerFencesThanSlotsAreAllMonitoredWithTheLargestRefreshRegion() {
        let few = (0..<5).map { Geofence(id: "g\($0)", latitude: 45 + Double($0) * 0.01, longitude: 14, radiusMeters: 100) }
        let page = RegionPager(fences: few).page(latitude: 45, longitude: 14)
        #expect(Set(page.fences.map(\.id)) == Set(few.map(\.id)))
        #expect(page.fences.first?.id == "g0")  // nearest first
        #expect(page.refresh.radiusMeters == RegionPager.maximumRefreshRadiusMeters)
        #expect(RegionPager(fences: []).page(latitude: 0, longitude: 0).fences.isEmpty)
    }

    @Test func aFarAwayFenceIsStillFoundBeyondTheRingSearch() {
        let far = [Geofence(id: "far", latitude: -33.9, longitude: 151.2, radiusMeters: 200)]
        #expect(RegionPager(fences: far).page(latitude: 45, longitude: 14).fences.map(\.id) == ["far"])
    }

    @Test func changesAreTheMinimalSlotDiff() {
        let a = Geofence(id: "a", latitude: 45, longitude: 14, radiusMeters: 100)
        let b = Geofence(id: "b", latitude: 45.001, longitude: 14, radiusMeters: 100)
        let c = Geofence(id: "c", latitude: 45.002, longitude: 14, radiusMeters: 100)
        let refresh = RefreshRegion(latitude: 45, longitude: 14, radiusMeters: 500)
        var moved = b
        moved.radiusMeters = 150
        let change = RegionPage(fences: [moved, c], refresh: refresh)
            .changes(from: RegionPage(fences: [a, b], refresh: refresh))
        #expect(change.remove == ["a"])
        #expect(change.add.map(\.id) == ["b", "c"])  // b changed, so it is re-added
        #expect(change.churn == 3)
    }

    @Test func aNewFenceSetRepagesAtTheLastPosition() {
        var paging = RegionPaging()
        #expect(paging.observe(latitude: 45, longitude: 14)?.add.isEmpty == true)
        let change = paging.replace(fences: [Geofence(id: "x", latitude: 45.001, longitude: 14, radiusMeters: 50)])
        #expect(change?.add.map(\.id) == ["x"])
        #expect(paging.observe(latitude: 45.0001, longitude: 14) == nil)  // still inside the refresh region
        #expect(paging.reset() == ["x", RegionPager.refreshIdentifier])
    }
}
