import BeekonPrimitives
import Foundation

/// A cheap pre-check for comparisons of the haversine distance (`Geodesy.distance`)
/// with a limit, used by the geofence engine so that most fences near a fix cost a
/// few multiplications instead of five trigonometric calls.
///
/// Points are earth-centred vectors on the sphere of radius `Geodesy.earthRadiusMeters`;
/// the straight-line (chord) distance `c` between two of them and the great-circle
/// distance `d` satisfy `d = 2R·asin(c / 2R)`, so `c ≤ d`, and for `c ≤ R/5` also
/// `d ≤ c·(1 + c²/20R²)` (from the series of asin, `asin x ≤ x(1 + x²/5)` for `x ≤ 0.1`).
/// ``isWithin(chordSquared:limit:)`` answers only when these bounds decide the
/// comparison with a margin (1 mm plus 1e-9 of the limit) far larger than the rounding
/// of either computation (below 1e-6 m at these scales); otherwise it returns nil and
/// the caller computes the haversine distance exactly as before. The result is
/// therefore always the one `Geodesy.distance(…) <= limit` gives.
enum SphereChord {
    /// An earth-centred point, metres.
    struct Point: Sendable {
        var x: Double, y: Double, z: Double

        init(x: Double, y: Double, z: Double) {
            self.x = x
            self.y = y
            self.z = z
        }

        /// The point at a latitude and longitude, degrees.
        init(latitude: Double, longitude: Double) {
            let phi = latitude * .pi / 180
            let lambda = longitude * .pi / 180
            let r = Geodesy.earthRadiusMeters
            let c = cos(phi)
            self.init(x: r * c * cos(lambda), y: r * c * sin(lambda), z: r * sin(phi))
        }

        /// The squared chord distance to `other`, m².
        @inline(__always)
        func chordSquared(to other: Point) -> Double {
            let dx = x - other.x
            let dy = y - other.y
            let dz = z - other.z
            return dx * dx + dy * dy + dz * dz
        }
    }

    /// Chords up to this length use the upper bound (x = c/2R ≤ 0.1).
    static let upperBoundChord = Geodesy.earthRadiusMeters / 5
    private static let twentyRSquared = 20 * Geodesy.earthRadiusMeters * Geodesy.earthRadiusMeters

    /// Whether the haversine distance between two points whose squared chord is `c2`
    /// is at most `limit`: true or false when the chord decides it, nil when the caller
    /// must compute the distance.
    @inline(__always)
    static func isWithin(chordSquared c2: Double, limit: Double) -> Bool? {
        guard limit.isFinite, c2.isFinite else { return nil }
        let slack = 0.001 + abs(limit) * 1e-9
        let above = limit + slack
        if above <= 0 { return nil }  // a limit ≤ 0: leave it to the exact rule
        if c2 > above * above { return false }  // d ≥ c > limit + slack
        let below = limit - slack
        if below > 0, c2 <= upperBoundChord * upperBoundChord {
            let k = 1 + c2 / twentyRSquared  // d ≤ c·k
            if c2 * k * k < below * below { return true }  // d < limit − slack
        }
        return nil
    }
}
