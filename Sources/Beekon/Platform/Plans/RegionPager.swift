import BeekonPrimitives
import Foundation

/// Which geofences occupy the OS's region-monitoring slots (GF-4 on Apple platforms).
///
/// iOS lets an app monitor 20 regions (`CLLocationManager`, and in practice `CLMonitor`).
/// The SDK's own engine stays the source of truth and evaluates every fix; the OS regions
/// only wake a suspended or terminated app near a fence. So the pager puts the fences
/// nearest to the device (by distance to their edge) into 19 slots and uses the 20th for a
/// *refresh region* around the current position whose radius is the edge distance of the
/// nearest fence it could not page in (clamped to 150 m … 50 km): leaving the refresh
/// region wakes the app, which re-pages. No unmonitored fence can be entered without
/// first leaving the refresh region, except when that radius was raised to its 150 m floor.
///
/// Lookups go through a uniform grid of `cellDegrees` cells searched in rings outward, so
/// a re-page touches a few cells however many fences there are (beyond 64 rings it
/// falls back to a scan). Longitudes are not wrapped at ±180°.
package struct RegionPager: Sendable {
    /// Slots the OS grants an app.
    package static let osSlots = 20
    /// The identifier of the refresh region.
    package static let refreshIdentifier = "dev.beekon.refresh"
    /// Smallest refresh radius: below this the OS does not report exits reliably.
    package static let minimumRefreshRadiusMeters = 150.0
    /// Largest refresh radius (above `maximumRegionMonitoringDistance` on current devices it is clamped by the OS).
    package static let maximumRefreshRadiusMeters = 50_000.0
    private static let metersPerDegree = 111_195.0
    private static let maxRings = 64

    private struct Cell: Hashable {
        var i: Int32
        var j: Int32
    }

    private let fences: [Geofence]
    private var grid: [Cell: [Int32]] = [:]
    private let cellDegrees: Double
    private let maxRadius: Double
    /// Fence slots: the OS slots minus the refresh region.
    package let fenceSlots: Int

    /// Indexes `fences` for paging into `slots` OS slots (one is the refresh region).
    package init(fences: [Geofence], slots: Int = RegionPager.osSlots, cellDegrees: Double = 0.01) {
        self.fences = fences
        self.fenceSlots = max(0, slots - 1)
        self.cellDegrees = cellDegrees
        self.maxRadius = fences.map(\.radiusMeters).max() ?? 0
        for (n, fence) in fences.enumerated() {
            grid[cell(fence.latitude, fence.longitude), default: []].append(Int32(n))
        }
    }

    /// The page for a device at `latitude`, `longitude`: the nearest fences, nearest first,
    /// and the refresh region centred there.
    package func page(latitude: Double, longitude: Double) -> RegionPage {
        let nearest = self.nearest(fenceSlots + 1, latitude: latitude, longitude: longitude)
        let monitored = nearest.prefix(fenceSlots).map { fences[Int($0.index)] }
        let next = nearest.count > fenceSlots ? nearest[fenceSlots].edge : .infinity
        let radius = min(Self.maximumRefreshRadiusMeters, max(Self.minimumRefreshRadiusMeters, next))
        return RegionPage(fences: monitored, refresh: RefreshRegion(latitude: latitude, longitude: longitude, radiusMeters: radius))
    }

    /// The `count` fences nearest by edge distance, nearest first.
    private func nearest(_ count: Int, latitude: Double, longitude: Double) -> [(index: Int32, edge: Double)] {
        guard count > 0, !fences.isEmpty else { return [] }
        var best: [(index: Int32, edge: Double)] = []
        best.reserveCapacity(count + 1)
        func consider(_ n: Int32) {
            let f = fences[Int(n)]
            let edge = Geodesy.distance(latitude, longitude, f.latitude, f.longitude) - f.radiusMeters
            if best.count == count, let last = best.last, edge >= last.edge { return }
            let at = best.firstIndex { $0.edge > edge } ?? best.count
            best.insert((n, edge), at: at)
            if best.count > count { best.removeLast() }
        }
        let centre = cell(latitude, longitude)
        var visited = 0
        for ring in 0...Self.maxRings {
            visited += visitRing(ring, around: centre, consider)
            if visited == fences.count { return best }
            // Every fence not yet seen lies at least `ring` whole cells away.
            let farLatitude = min(89.9, abs(latitude) + Double(ring + 1) * cellDegrees)
            let cellMeters = cellDegrees * Self.metersPerDegree * cos(farLatitude * .pi / 180)
            if best.count == count, let last = best.last, last.edge <= Double(ring) * cellMeters - maxRadius { return best }
        }
        best = []
        for n in fences.indices { consider(Int32(n)) }
        return best
    }

    /// Calls `body` for every fence in the cells of `ring` around `centre`; returns how many.
    private func visitRing(_ ring: Int, around centre: Cell, _ body: (Int32) -> Void) -> Int {
        var seen = 0
        let r = Int32(ring)
        for di in -r...r {
            let edgeRow = di == -r || di == r
            let step: Int32 = edgeRow || r == 0 ? 1 : 2 * r
            var dj = -r
            while dj <= r {
                if let members = grid[Cell(i: centre.i &+ di, j: centre.j &+ dj)] {
                    for n in members { body(n) }
                    seen += members.count
                }
                dj += step
            }
        }
        return seen
    }

    private func cell(_ latitude: Double, _ longitude: Double) -> Cell {
        Cell(i: Int32((latitude / cellDegrees).rounded(.down)), j: Int32((longitude / cellDegrees).rounded(.down)))
    }
}

/// The regions that should occupy the OS slots.
package struct RegionPage: Sendable, Hashable {
    /// The fences to monitor, nearest first.
    package var fences: [Geofence]
    /// The region whose exit triggers the next re-page.
    package var refresh: RefreshRegion

    /// Whether a device at `latitude`, `longitude` is still inside the refresh region.
    package func contains(latitude: Double, longitude: Double) -> Bool {
        Geodesy.distance(latitude, longitude, refresh.latitude, refresh.longitude) <= refresh.radiusMeters
    }

    /// What to change in the OS to go from `old` (nil: nothing monitored) to this page:
    /// fences to stop and start monitoring, and the refresh region to (re)place.
    package func changes(from old: RegionPage?) -> RegionChange {
        let before = Dictionary((old?.fences ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let after = Set(fences.map(\.id))
        let remove = before.keys.filter { !after.contains($0) }.sorted()
        let add = fences.filter { before[$0.id] != $0 }
        return RegionChange(remove: remove, add: add, refresh: refresh)
    }
}

/// The circular region around the device at the last re-page.
package struct RefreshRegion: Sendable, Hashable {
    /// Centre latitude, degrees.
    package var latitude: Double
    /// Centre longitude, degrees.
    package var longitude: Double
    /// Radius, metres.
    package var radiusMeters: Double
}

/// One re-page as OS calls: stop `remove`, start `add`, replace the refresh region.
package struct RegionChange: Sendable, Hashable {
    /// Ids of fences to stop monitoring.
    package var remove: [String]
    /// Fences to start monitoring (new, or changed since they were paged in).
    package var add: [Geofence]
    /// The refresh region to monitor under ``RegionPager/refreshIdentifier``.
    package var refresh: RefreshRegion
    /// Fence slots that changed (the refresh region is replaced on every re-page and not counted).
    package var churn: Int { remove.count + add.count }
}
