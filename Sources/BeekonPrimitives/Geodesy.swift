import Foundation

/// Great-circle helpers on a spherical Earth (mean radius); accurate to ~0.5 %
/// which is far below GNSS noise at the distances the gate works with. The one haversine of
/// the SDK, the agent, the benchmarks and the ingest server.
public enum Geodesy {
    /// The mean Earth radius in metres (IUGG R1).
    public static let earthRadiusMeters = 6_371_008.8

    /// Haversine distance in metres.
    public static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let p1 = lat1 * .pi / 180
        let p2 = lat2 * .pi / 180
        let dp = p2 - p1
        let dl = (lon2 - lon1) * .pi / 180
        let a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * earthRadiusMeters * asin(min(1, sqrt(a)))
    }

    /// Initial great-circle bearing from point 1 to point 2, degrees in [0, 360).
    public static func bearing(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let p1 = lat1 * .pi / 180
        let p2 = lat2 * .pi / 180
        let dl = (lon2 - lon1) * .pi / 180
        let y = sin(dl) * cos(p2)
        let x = cos(p1) * sin(p2) - sin(p1) * cos(p2) * cos(dl)
        let deg = atan2(y, x) * 180 / .pi
        return (deg + 360).truncatingRemainder(dividingBy: 360)
    }

    /// The smaller angle between two headings, degrees in [0, 180].
    public static func angleBetween(_ a: Double, _ b: Double) -> Double {
        let d = abs(a - b).truncatingRemainder(dividingBy: 360)
        return d > 180 ? 360 - d : d
    }
}
