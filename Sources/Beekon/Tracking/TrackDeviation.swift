import BeekonPrimitives
import Foundation

/// The distance from raw fixes to the polyline through stored fixes on a spherical Earth
/// (BY-9): each segment is the great-circle arc between two consecutive stored fixes, and a
/// point's distance to it is the cross-track distance when its foot falls on the arc, else
/// the distance to the nearer end. The measure behind `beekon fidelity`, the property tests
/// and the offline Douglas–Peucker reference; independent of the online algorithm's plane.
package enum TrackDeviation {
    /// A point as a unit vector from the Earth's centre.
    package struct Unit: Sendable {
        var x, y, z: Double

        package init(latitude: Double, longitude: Double) {
            let p = latitude * .pi / 180
            let l = longitude * .pi / 180
            x = cos(p) * cos(l)
            y = cos(p) * sin(l)
            z = sin(p)
        }

        init(_ x: Double, _ y: Double, _ z: Double) {
            self.x = x
            self.y = y
            self.z = z
        }

        func dot(_ o: Unit) -> Double { x * o.x + y * o.y + z * o.z }
        func cross(_ o: Unit) -> Unit { Unit(y * o.z - z * o.y, z * o.x - x * o.z, x * o.y - y * o.x) }
        var norm: Double { (x * x + y * y + z * z).squareRoot() }
        /// The central angle to `o`, radians (atan2 form: exact for tiny angles too).
        func angle(to o: Unit) -> Double { atan2(cross(o).norm, dot(o)) }
    }

    /// Metres from `p` to the great-circle arc from `a` to `b`.
    package static func distance(_ p: Unit, toArc a: Unit, _ b: Unit) -> Double {
        let r = Geodesy.earthRadiusMeters
        let n = a.cross(b)
        let len = n.norm
        if len < 1e-15 { return r * p.angle(to: a) }
        let nu = Unit(n.x / len, n.y / len, n.z / len)
        let s = p.dot(nu)
        // The foot on the great circle lies on the arc when it is between a and b.
        let foot = Unit(p.x - s * nu.x, p.y - s * nu.y, p.z - s * nu.z)
        if a.cross(foot).dot(nu) >= 0, foot.cross(b).dot(nu) >= 0, foot.dot(a) > 0 {
            return r * asin(min(1, abs(s)))
        }
        return r * min(p.angle(to: a), p.angle(to: b))
    }

    /// For every point, metres to the polyline through `line` (one point: distance to it).
    package static func distances(from points: [(Double, Double)], to line: [(Double, Double)]) -> [Double] {
        guard let first = line.first else { return [] }
        let l = line.map { Unit(latitude: $0.0, longitude: $0.1) }
        return points.map { q in
            let p = Unit(latitude: q.0, longitude: q.1)
            if l.count == 1 { return Geodesy.earthRadiusMeters * p.angle(to: Unit(latitude: first.0, longitude: first.1)) }
            var best = Double.infinity
            for i in 1..<l.count { best = min(best, distance(p, toArc: l[i - 1], l[i])) }
            return best
        }
    }

    /// Offline Douglas–Peucker (Douglas & Peucker 1973) at `tolerance` metres with the same
    /// measure: the indices of the points it keeps (first and last always). The reference
    /// the online admission is compared with: it sees the whole track at once.
    package static func douglasPeucker(_ points: [(Double, Double)], tolerance: Double) -> [Int] {
        let u = points.map { Unit(latitude: $0.0, longitude: $0.1) }
        let keep = DouglasPeucker.keep(count: u.count, tolerance: tolerance) { i, lo, hi in distance(u[i], toArc: u[lo], u[hi]) }
        return keep.indices.filter { keep[$0] }
    }
}
