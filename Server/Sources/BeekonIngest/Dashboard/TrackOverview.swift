import Foundation

/// The overview tier of the history (migration `v7-track-overview`): a pyramid of
/// level-of-detail points maintained per device and per 10-minute time bucket, so that a
/// month of 1 Hz fixes (2.6 M) draws from a few thousand rows instead of every fix.
///
/// For each bucket, Douglas–Peucker runs once over the bucket's raw fixes *without* a
/// tolerance and records each fix's significance: the smallest split distance on its
/// path in the recursion. Keeping the fixes whose significance exceeds `τ` is then
/// exactly Douglas–Peucker at tolerance `τ` on that bucket. A fix is stored with its
/// `level`: the lowest Web Mercator zoom `L` (0…`maxLevel`) at which it is kept with
/// `τ(L)` = half a screen pixel at zoom `L` at the bucket's latitude. The bucket's first
/// and last fixes have level 0. Fixes below half a pixel at `maxLevel` are not stored.
///
/// **Error bound.** The tier points of levels `≤ L` form, bucket by bucket, a polyline
/// within `τ(L)` (perpendicular distance, local equirectangular metres) of every raw fix.
/// The history endpoint then runs `TrackSimplifier` at `τ(L) / 2` (radial pass + DP: at
/// most `τ(L)` more), so the drawn track is within one pixel at zoom `L` of every fix.
package struct TrackOverview: Sendable {
    /// Bucket length: 10 minutes (600 fixes at 1 Hz; what a rebuild re-reads).
    package static let bucketMillis: Int64 = 600_000
    /// The finest level stored (half a pixel there is ≈ 1.2 m · cos(latitude)).
    package static let maxLevel = 16
    /// Metres per pixel at zoom 0 at the equator (256-pixel tiles, WGS 84 equatorial radius).
    static let metersPerPixelZ0 = 156_543.033_928

    /// The bucket a fix time belongs to (floor division: also right before 1970).
    package static func bucket(_ millis: Int64) -> Int64 {
        let (q, r) = millis.quotientAndRemainder(dividingBy: bucketMillis)
        return r < 0 ? q - 1 : q
    }

    /// The first bucket that has not ended by `settledBefore` (milliseconds): buckets before it
    /// ended at or before that time (`Int64.max`: every bucket has).
    static func firstOpenBucket(settledBefore: Int64) -> Int64 {
        settledBefore == .max ? .max : bucket(settledBefore)
    }

    /// The SQL expression of `bucket(_:)` for a column (`%` truncates in SQLite and PostgreSQL).
    static func bucketSQL(_ column: String) -> String {
        "((\(column) - ((\(column) % \(bucketMillis)) + \(bucketMillis)) % \(bucketMillis)) / \(bucketMillis))"
    }

    /// Half a screen pixel at `level`, in metres, at `latitude`.
    package static func halfPixelMeters(level: Int, latitude: Double) -> Double {
        metersPerPixelZ0 * max(0.000_001, cos(latitude * .pi / 180)) / pow(2, Double(level)) / 2
    }

    /// The level of every point of one bucket (in time order): nil for a point finer than
    /// half a pixel at `maxLevel` (not stored).
    package static func levels(_ points: [TrackPoint]) -> [Int?] {
        guard let first = points.first else { return [] }
        let halfPixelZ0 = halfPixelMeters(level: 0, latitude: first.latitude)
        return significance(points).map { sig -> Int? in
            guard sig.isFinite else { return 0 }
            guard sig > 0 else { return nil }
            // Smallest L with sig > halfPixelZ0 / 2^L.
            let level = max(0, Int((log2(halfPixelZ0 / sig)).rounded(.down)) + 1)
            return level <= maxLevel ? level : nil
        }
    }

    /// Each point's Douglas–Peucker significance in metres (infinite for the two ends).
    static func significance(_ points: [TrackPoint]) -> [Double] {
        let n = points.count
        var sig = [Double](repeating: 0, count: n)
        guard n > 0 else { return sig }
        sig[0] = .infinity
        sig[n - 1] = .infinity
        guard n > 2 else { return sig }
        let kx = 111_320 * cos(points[0].latitude * .pi / 180)
        let ky = 110_540.0
        let xs = points.map { $0.longitude * kx }
        let ys = points.map { $0.latitude * ky }
        // (first, last, the significance of the split that made this interval)
        var stack: [(Int, Int, Double)] = [(0, n - 1, .infinity)]
        while let (a, b, cap) = stack.popLast() {
            guard b > a + 1 else { continue }
            let dx = xs[b] - xs[a]
            let dy = ys[b] - ys[a]
            let len2 = dx * dx + dy * dy
            var worst = -1.0
            var at = a + 1
            for i in (a + 1)..<b {
                let ex = xs[i] - xs[a]
                let ey = ys[i] - ys[a]
                let d2: Double
                if len2 == 0 {
                    d2 = ex * ex + ey * ey
                } else {
                    let cross = dx * ey - dy * ex
                    d2 = cross * cross / len2
                }
                if d2 > worst {
                    worst = d2
                    at = i
                }
            }
            let s = min(cap, worst.squareRoot())
            sig[at] = s
            stack.append((a, at, s))
            stack.append((at, b, s))
        }
        return sig
    }

    /// The zoom (0…18) at which `bounds` fits in 85 % of a `width` × `height` pixel view,
    /// as the dashboard fits its view.
    package static func fitZoom(_ bounds: TrackBounds, width: Int, height: Int) -> Int {
        var zoom = 18
        while zoom > 0 {
            let a = project(longitude: bounds.west, latitude: bounds.north, zoom: zoom)
            let b = project(longitude: bounds.east, latitude: bounds.south, zoom: zoom)
            if b.x - a.x < Double(width) * 0.85 && b.y - a.y < Double(height) * 0.85 { break }
            zoom -= 1
        }
        return zoom
    }

    /// Web Mercator world pixel coordinates at `zoom`.
    static func project(longitude: Double, latitude: Double, zoom: Int) -> (x: Double, y: Double) {
        let size = 256 * pow(2, Double(zoom))
        let s = sin(max(-85.05, min(85.05, latitude)) * .pi / 180)
        return ((longitude + 180) / 360 * size, (0.5 - log((1 + s) / (1 - s)) / (4 * .pi)) * size)
    }
}

/// A latitude/longitude box, degrees.
package struct TrackBounds: Sendable, Equatable {
    /// Degrees, WGS 84.
    package var south: Double, west: Double, north: Double, east: Double

    /// Creates a box.
    package init(south: Double, west: Double, north: Double, east: Double) {
        self.south = south
        self.west = west
        self.north = north
        self.east = east
    }

    /// The box of `points` (nil when empty).
    package init?(_ points: some Collection<TrackPoint>) {
        guard let p = points.first else { return nil }
        self.init(south: p.latitude, west: p.longitude, north: p.latitude, east: p.longitude)
        for q in points { extend(latitude: q.latitude, longitude: q.longitude) }
    }

    /// Grows the box to hold a point.
    package mutating func extend(latitude: Double, longitude: Double) {
        south = min(south, latitude)
        north = max(north, latitude)
        west = min(west, longitude)
        east = max(east, longitude)
    }

    /// The smallest box holding both.
    package func union(_ other: TrackBounds?) -> TrackBounds {
        guard let o = other else { return self }
        return TrackBounds(south: min(south, o.south), west: min(west, o.west), north: max(north, o.north), east: max(east, o.east))
    }
}
