import BeekonPrimitives
import Foundation

/// One point of a device's history: fix time (Unix ms) and position.
package struct TrackPoint: Sendable, Equatable {
    /// Fix time, Unix ms.
    package var millis: Int64
    /// Degrees, WGS 84.
    package var latitude: Double, longitude: Double

    /// Creates a point.
    package init(millis: Int64, latitude: Double, longitude: Double) {
        self.millis = millis
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// Server-side simplification of dense histories for the map: a radial-distance pass
/// (drops points closer than the tolerance to the last kept one, O(n)) followed by
/// Douglas–Peucker, with the tolerance one screen pixel at the requested Web Mercator
/// zoom level. The first and last points are always kept.
package struct TrackSimplifier: Sendable {
    /// Tolerance in metres.
    package var toleranceMeters: Double

    /// A simplifier whose tolerance is `pixels` screen pixels at `zoom` (0…22) at `latitude`.
    package init(zoom: Int, latitude: Double, pixels: Double = 1) {
        let metersPerPixel = 156_543.033_928 * cos(latitude * .pi / 180) / pow(2, Double(min(max(zoom, 0), 22)))
        toleranceMeters = max(0.01, metersPerPixel * pixels)
    }

    /// A simplifier with an explicit tolerance in metres.
    package init(toleranceMeters: Double) {
        self.toleranceMeters = max(0, toleranceMeters)
    }

    /// The simplified track (a subsequence of `points`, in order).
    package func simplify(_ points: [TrackPoint]) -> [TrackPoint] {
        guard points.count > 2, toleranceMeters > 0 else { return points }
        // Local equirectangular projection to metres around the first point: exact enough
        // for a tolerance of pixels.
        let lat0 = points[0].latitude * .pi / 180
        let kx = 111_320 * cos(lat0)
        let ky = 110_540.0
        var xs: [Double] = []
        var ys: [Double] = []
        var index: [Int] = []
        xs.reserveCapacity(points.count / 4)
        ys.reserveCapacity(points.count / 4)
        let t2 = toleranceMeters * toleranceMeters
        for (i, p) in points.enumerated() {
            let x = p.longitude * kx
            let y = p.latitude * ky
            if let lx = xs.last, let ly = ys.last, i != points.count - 1 {
                let dx = x - lx
                let dy = y - ly
                if dx * dx + dy * dy < t2 { continue }
            }
            xs.append(x)
            ys.append(y)
            index.append(i)
        }
        // Douglas–Peucker on the squared planar distance to the chord (to the start when the
        // chord is a point), against the squared tolerance.
        let keep = DouglasPeucker.keep(count: xs.count, tolerance: t2) { i, a, b in
            let dx = xs[b] - xs[a]
            let dy = ys[b] - ys[a]
            let len2 = dx * dx + dy * dy
            if len2 == 0 { return (xs[i] - xs[a]) * (xs[i] - xs[a]) + (ys[i] - ys[a]) * (ys[i] - ys[a]) }
            let cross = dx * (ys[i] - ys[a]) - dy * (xs[i] - xs[a])
            return cross * cross / len2
        }
        var out: [TrackPoint] = []
        for (k, kept) in keep.enumerated() where kept { out.append(points[index[k]]) }
        return out
    }
}
