import BeekonPrimitives
import Foundation

/// A spatial index over geofences (GF-4): a hierarchy of uniform grids whose
/// cells are roughly square in metres, with no cap on the number of fences.
///
/// **Layout.** Each level splits the globe into latitude rows of
/// `cellMeters` height; row `r` is split into as many longitude columns as fit
/// `cellMeters`-wide cells at the row's widest latitude, so cells stay about
/// square from the equator to the poles, where a row is a single ring-shaped
/// cell. Level `k` uses `baseCellMeters × 8^k`.
///
/// **Insert.** A fence goes into every cell of the finest level that its
/// bounding box (the spherical cap of `radiusMeters + marginMeters`, plus 1 m
/// slack) overlaps, provided that is at most ``maxCellsPerFence`` cells;
/// larger fences go to a coarser level. A cap that contains a pole spans every
/// longitude; a box crossing the antimeridian is split in two. Fences too large
/// for the coarsest level are kept in a list scanned on every query.
///
/// **Query.** A point looks up its own cell on each non-empty level (one
/// dictionary lookup per level, usually one level). The result is a superset:
/// every fence whose centre is within `radiusMeters + marginMeters` of the point
/// is a candidate; callers check the exact distance.
///
/// Pure value type; not thread-safe by itself (it is `Sendable` and owned by one actor).
struct GeofenceIndex: Sendable {
    /// Finest cell size. Measured with 100,000 fences of 50–500 m in one city, per-fix
    /// time was flat (within run-to-run noise) from 250 m to 2 km cells; 500 m keeps a
    /// typical fence in a handful of cells and the candidates per lookup low.
    static let defaultBaseCellMeters = 500.0
    /// Each level's cells are this many times larger than the previous level's.
    static let levelFactor = 8.0
    /// Number of grid levels (500 m … 2,048 km with the defaults).
    static let levelCount = 5
    /// A fence spanning more cells than this on a level goes to the next coarser one.
    static let maxCellsPerFence = 16

    /// Extra distance beyond each fence's radius that a query is guaranteed to cover.
    let marginMeters: Double

    private var levels: [GridLevel]
    private var slots: [Slot?] = []
    /// By slot, parallel to `slots`: what a query needs of each fence, contiguous so
    /// that scanning a bucket touches no strings (a free slot has radius −∞, marked false).
    private var entries: [Entry] = []
    private var freeSlots: [Int32] = []
    private var slotByID: [String: Int32] = [:]
    /// Fences too large for every level, scanned on each query.
    private var scanned: Set<Int32> = []

    private struct Slot: Sendable {
        var fence: Geofence
        /// The level and cells the fence is stored in; nil when it is in `scanned`.
        var placement: (level: Int, cells: [Int64])?
    }

    /// A fence as the per-fix checks see it: its centre for ``SphereChord`` and its radius,
    /// plus one flag the owner of the index may set (the engine marks the fences it is
    /// inside); the flag is cleared when the fence is removed or replaced.
    struct Entry: Sendable {
        var centre: SphereChord.Point
        var radiusMeters: Double
        var marked: Bool

        static let free = Entry(centre: SphereChord.Point(x: 0, y: 0, z: 0), radiusMeters: -.infinity, marked: false)
    }

    /// Creates an empty index whose queries cover `marginMeters` beyond each radius.
    init(marginMeters: Double = 0, baseCellMeters: Double = Self.defaultBaseCellMeters) {
        precondition(marginMeters >= 0 && baseCellMeters > 0)
        self.marginMeters = marginMeters
        var size = baseCellMeters
        var levels: [GridLevel] = []
        for _ in 0..<Self.levelCount {
            levels.append(GridLevel(cellMeters: size))
            size *= Self.levelFactor
        }
        self.levels = levels
    }

    /// The number of fences.
    var count: Int { slotByID.count }

    /// All fences, in no particular order.
    var fences: [Geofence] { slots.compactMap { $0?.fence } }

    /// The fence with `id`, if any.
    func fence(id: String) -> Geofence? {
        slotByID[id].flatMap { slots[Int($0)]?.fence }
    }

    /// Inserts `fence`, replacing any fence with the same id. The fence must be valid.
    mutating func insert(_ fence: Geofence) {
        remove(id: fence.id)
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = Int32(slots.count)
            slots.append(nil)
            entries.append(.free)
        }
        let reach = fence.radiusMeters + marginMeters + 1
        var placement: (level: Int, cells: [Int64])?
        // Index through `levels` (no local copy of a level) so the buckets are mutated in place.
        for k in levels.indices {
            if let cells = levels[k].cells(
                latitude: fence.latitude, longitude: fence.longitude,
                reachMeters: reach, limit: Self.maxCellsPerFence)
            {
                for key in cells { levels[k].buckets[key, default: []].append(slot) }
                levels[k].fenceCount += 1
                placement = (k, cells)
                break
            }
        }
        if placement == nil { scanned.insert(slot) }
        slots[Int(slot)] = Slot(fence: fence, placement: placement)
        entries[Int(slot)] = Entry(
            centre: SphereChord.Point(latitude: fence.latitude, longitude: fence.longitude),
            radiusMeters: fence.radiusMeters, marked: false)
        slotByID[fence.id] = slot
    }

    /// Removes the fence with `id`; an unknown id is ignored.
    mutating func remove(id: String) {
        guard let slot = slotByID.removeValue(forKey: id), let entry = slots[Int(slot)] else { return }
        if let (k, cells) = entry.placement {
            for key in cells {
                guard var bucket = levels[k].buckets.removeValue(forKey: key) else { continue }
                if let i = bucket.firstIndex(of: slot) {
                    bucket.swapAt(i, bucket.count - 1)
                    bucket.removeLast()
                }
                if !bucket.isEmpty { levels[k].buckets[key] = bucket }
            }
            levels[k].fenceCount -= 1
        } else {
            scanned.remove(slot)
        }
        slots[Int(slot)] = nil
        entries[Int(slot)] = .free
        freeSlots.append(slot)
    }

    /// The slot of the fence with `id`, if any. A slot stays valid until that fence is
    /// removed or replaced.
    func slot(id: String) -> Int32? { slotByID[id] }

    /// The fence in a valid `slot`.
    func fence(slot: Int32) -> Geofence { slots[Int(slot)]!.fence }

    /// The entry of a valid `slot`.
    func entry(slot: Int32) -> Entry { entries[Int(slot)] }

    /// Sets the caller's flag on a valid `slot` (see ``Entry``).
    mutating func setMarked(_ slot: Int32, _ marked: Bool) { entries[Int(slot)].marked = marked }

    /// Calls `body` once for each candidate fence near the point (a superset of the
    /// fences within `radiusMeters + marginMeters`), with its slot and entry. Longitudes
    /// outside −180…180 are wrapped. No allocation, no fence copied.
    func forEachCandidateSlot(latitude: Double, longitude: Double, _ body: (Int32, Entry) -> Void) {
        guard latitude.isFinite, longitude.isFinite else { return }
        let lat = min(90, max(-90, latitude))
        let lon = GridLevel.wrap(longitude)
        entries.withUnsafeBufferPointer { entries in
            for level in levels where level.fenceCount > 0 {
                guard let bucket = level.buckets[level.key(latitude: lat, longitude: lon)] else { continue }
                for slot in bucket { body(slot, entries[Int(slot)]) }
            }
            for slot in scanned { body(slot, entries[Int(slot)]) }
        }
    }

    /// Calls `body` once for each candidate fence near the point (see ``forEachCandidateSlot(latitude:longitude:_:)``).
    func forEachCandidate(latitude: Double, longitude: Double, _ body: (Geofence) -> Void) {
        forEachCandidateSlot(latitude: latitude, longitude: longitude) { slot, _ in body(slots[Int(slot)]!.fence) }
    }

    /// The candidate fences near the point (see `forEachCandidate`).
    func candidates(latitude: Double, longitude: Double) -> [Geofence] {
        var out: [Geofence] = []
        forEachCandidate(latitude: latitude, longitude: longitude) { out.append($0) }
        return out
    }

    /// The ids of the fences whose centre is within `radiusMeters + extraMeters` of the
    /// point, sorted; `extraMeters` must not exceed `marginMeters`.
    func ids(within extraMeters: Double = 0, ofLatitude latitude: Double, longitude: Double) -> [String] {
        precondition(extraMeters <= marginMeters, "the index only covers marginMeters beyond each radius")
        var out: [String] = []
        forEachCandidate(latitude: latitude, longitude: longitude) { f in
            if Geodesy.distance(latitude, longitude, f.latitude, f.longitude) <= f.radiusMeters + extraMeters {
                out.append(f.id)
            }
        }
        return out.sorted()
    }
}

/// One level of the grid hierarchy: latitude rows of fixed height, each split
/// into its own number of longitude columns.
private struct GridLevel: Sendable {
    static let metersPerDegree = Geodesy.earthRadiusMeters * .pi / 180

    let rowHeightDegrees: Double
    let columnCounts: [Int32]
    var buckets: [Int64: [Int32]] = [:]
    var fenceCount = 0

    init(cellMeters: Double) {
        let height = min(180, cellMeters / Self.metersPerDegree)
        let rows = max(1, Int((180 / height).rounded(.up)))
        rowHeightDegrees = 180 / Double(rows)
        columnCounts = (0..<rows).map { r in
            let lo = -90 + Double(r) * (180 / Double(rows))
            let hi = lo + 180 / Double(rows)
            let widest = lo <= 0 && hi >= 0 ? 0 : min(abs(lo), abs(hi))
            let ring = 360 * Self.metersPerDegree * cos(widest * .pi / 180)
            return Int32(max(1, min(Double(Int32.max), (ring / cellMeters).rounded(.down))))
        }
    }

    /// Maps any finite longitude into −180…180.
    static func wrap(_ lon: Double) -> Double {
        if (-180...180).contains(lon) { return lon }
        let w = (lon + 180).truncatingRemainder(dividingBy: 360)
        return (w < 0 ? w + 360 : w) - 180
    }

    func row(_ lat: Double) -> Int {
        min(columnCounts.count - 1, max(0, Int(((lat + 90) / rowHeightDegrees).rounded(.down))))
    }

    func column(_ lon: Double, row: Int) -> Int {
        let n = Int(columnCounts[row])
        return min(n - 1, max(0, Int(((lon + 180) / 360 * Double(n)).rounded(.down))))
    }

    func key(latitude: Double, longitude: Double) -> Int64 {
        let r = row(latitude)
        return Int64(r) << 32 | Int64(column(longitude, row: r))
    }

    /// The cells overlapped by the bounding box of the spherical cap of `reachMeters`
    /// around the centre, or nil when that is more than `limit` cells.
    func cells(latitude: Double, longitude: Double, reachMeters: Double, limit: Int) -> [Int64]? {
        let rho = reachMeters / Geodesy.earthRadiusMeters  // angular radius, radians
        guard rho < .pi / 2 else { return nil }
        let dLat = rho * 180 / .pi
        let latLo = latitude - dLat
        let latHi = latitude + dLat
        // Longitude ranges in degrees; the full circle when the cap holds a pole.
        var ranges: [(Double, Double)]
        let phi = latitude * .pi / 180
        if latHi >= 90 || latLo <= -90 || sin(rho) >= cos(phi) {
            ranges = [(-180, 180)]
        } else {
            let dLon = asin(sin(rho) / cos(phi)) * 180 / .pi
            let lo = longitude - dLon
            let hi = longitude + dLon
            if lo <= -180 {
                ranges = [(-180, hi), (lo + 360, 180)]
            } else if hi >= 180 {
                ranges = [(lo, 180), (-180, hi - 360)]
            } else {
                ranges = [(lo, hi)]
            }
        }
        let r0 = row(max(-90, latLo))
        let r1 = row(min(90, latHi))
        var total = 0
        for r in r0...r1 {
            for (lo, hi) in ranges { total += column(hi, row: r) - column(lo, row: r) + 1 }
            if total > limit { return nil }
        }
        var out: [Int64] = []
        out.reserveCapacity(total)
        for r in r0...r1 {
            var seen = Set<Int>()
            for (lo, hi) in ranges {
                for c in column(lo, row: r)...column(hi, row: r) where seen.insert(c).inserted {
                    out.append(Int64(r) << 32 | Int64(c))
                }
            }
        }
        return out
    }
}
