import Foundation

/// Great-circle helpers on a spherical Earth (mean radius); accurate to ~0.5 %
/// which is far below GNSS noise at the distances the gate works with.
enum Geodesy {
    static let earthRadiusMeters = 6_371_008.8

    /// Haversine distance in metres.
    static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let p1 = lat1 * .pi / 180, p2 = lat2 * .pi / 180
        let dp = p2 - p1, dl = (lon2 - lon1) * .pi / 180
        let a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * earthRadiusMeters * asin(min(1, sqrt(a)))
    }
}
