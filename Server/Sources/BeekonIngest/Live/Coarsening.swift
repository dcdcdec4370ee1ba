import BeekonWire
import Foundation

/// Coarsens positions server-side for a share with a precision: latitude and longitude
/// are rounded to the fewest decimal places whose step is still at least `meters` on
/// the ground (longitude's step is measured at the rounded latitude), accuracy becomes
/// at least `meters`, altitude and beacon distances are rounded to `meters`, and speed and
/// bearing are left out (two fixes a second apart would give the position to well under
/// the precision). A coarsened value never carries more decimals than its precision
/// allows, on any endpoint or event (XR-4). It works on typed values only; JSON kept as
/// text is read back into its type first (`ViewerJSON`).
struct Coarsening: Sendable, Equatable {
    /// The precision, in metres (> 0).
    let meters: Double

    static let metersPerDegree = 111_320.0

    /// Decimal places for a step of at least `meters` where one degree is `metersPerDegree` long.
    static func decimals(meters: Double, metersPerDegree: Double) -> Int {
        guard meters > 0, metersPerDegree > meters else { return 0 }
        return max(0, Int((log10(metersPerDegree / meters)).rounded(.down)))
    }

    static func round(_ value: Double, decimals: Int) -> Double {
        let scale = pow(10, Double(decimals))
        return (value * scale).rounded() / scale
    }

    /// The coarsened (latitude, longitude).
    func coordinate(latitude: Double, longitude: Double) -> (Double, Double) {
        let lat = Self.round(latitude, decimals: Self.decimals(meters: meters, metersPerDegree: Self.metersPerDegree))
        let lonMeters = Self.metersPerDegree * cos(lat * .pi / 180)
        let lon = Self.round(longitude, decimals: Self.decimals(meters: meters, metersPerDegree: lonMeters))
        return (lat, lon)
    }

    /// A coarsened copy of a location.
    func location(_ l: WireLocation) -> WireLocation {
        var c = l
        (c.latitude, c.longitude) = coordinate(latitude: l.latitude, longitude: l.longitude)
        c.accuracy = max(l.accuracy ?? 0, meters)
        c.altitude = l.altitude.map(multiple)
        c.speed = nil
        c.bearing = nil
        return c
    }

    /// `value` rounded to a whole multiple of the precision (altitudes, beacon distances).
    func multiple(_ value: Double) -> Double { (value / meters).rounded() * meters }

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
