import BeekonWire
import Foundation

/// Coarsens positions server-side for a share with a precision: latitude and longitude
/// are rounded to the fewest decimal places whose step is still at least `metres` on
/// the ground (longitude's step is measured at the rounded latitude), accuracy becomes
/// at least `metres`, altitude and beacon distances are rounded to `metres`, and speed and
/// bearing are left out (two fixes a second apart would give the position to well under
/// the precision). A coarsened value never carries more decimals than its precision
/// allows, on any endpoint or event (XR-4). It works on typed values only; JSON kept as
/// text is read back into its type first (`ViewerJSON`).
struct Coarsening: Sendable, Equatable {
    /// The precision, in metres (> 0).
    let metres: Double

    static let metresPerDegree = 111_320.0

    /// Decimal places for a step of at least `metres` where one degree is `metresPerDegree` long.
    static func decimals(metres: Double, metresPerDegree: Double) -> Int {
        guard metres > 0, metresPerDegree > metres else { return 0 }
        return max(0, Int((log10(metresPerDegree / metres)).rounded(.down)))
    }

    static func round(_ value: Double, decimals: Int) -> Double {
        let scale = pow(10, Double(decimals))
        return (value * scale).rounded() / scale
    }

    /// The coarsened (latitude, longitude).
    func coordinate(latitude: Double, longitude: Double) -> (Double, Double) {
        let lat = Self.round(latitude, decimals: Self.decimals(metres: metres, metresPerDegree: Self.metresPerDegree))
        let lonMetres = Self.metresPerDegree * cos(lat * .pi / 180)
        let lon = Self.round(longitude, decimals: Self.decimals(metres: metres, metresPerDegree: lonMetres))
        return (lat, lon)
    }

    /// A coarsened copy of a location.
    func location(_ l: WireLocation) -> WireLocation {
        var c = l
        (c.latitude, c.longitude) = coordinate(latitude: l.latitude, longitude: l.longitude)
        c.accuracy = max(l.accuracy ?? 0, metres)
        c.altitude = l.altitude.map(multiple)
        c.speed = nil
        c.bearing = nil
        return c
    }

    /// `value` rounded to a whole multiple of the precision (altitudes, beacon distances).
    func multiple(_ value: Double) -> Double { (value / metres).rounded() * metres }

    /// A coarsened copy of a stored fix.
    func fix(_ f: StoredFix) -> StoredFix {
        var c = f
        c.location = location(f.location)
        return c
    }

    /// A track point at the coarsened position.
    func point(_ p: TrackPoint) -> TrackPoint {
        let (lat, lon) = coordinate(latitude: p.latitude, longitude: p.longitude)
        return TrackPoint(millis: p.millis, latitude: lat, longitude: lon)
    }
}
