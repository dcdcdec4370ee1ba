import BeekonPrimitives
import Foundation
import BeekonWire

/// Applies a `PrivacyConfig` to one outgoing fix (SPEC BY-4): zones first (on the true
/// position), then the grid blur. A pure function of the fix, so the same place always
/// uploads as the same point and a stationary user never draws a cloud.
package struct PrivacyFilter: Sendable, Hashable {
    package let config: PrivacyConfig

    /// A filter applying `config`.
    package init(config: PrivacyConfig) {
        self.config = config
    }

    /// Metres per degree of latitude on the sphere `Geodesy` uses.
    static let metersPerDegree = Geodesy.earthRadiusMeters * .pi / 180

    /// Whether the filter changes anything at all.
    var isActive: Bool { config.blurRadiusMeters != nil || !config.zones.isEmpty }

    /// The fix as it may leave the device; nil when a zone withholds it.
    package func apply(_ location: WireLocation) -> WireLocation? {
        var out = location
        if let zone = config.zones.first(where: { $0.contains(latitude: location.latitude, longitude: location.longitude) }) {
            if zone.action == .withhold { return nil }
            out.latitude = zone.latitude
            out.longitude = zone.longitude
            out.accuracy = max(location.accuracy ?? 0, zone.radiusMeters, config.blurRadiusMeters ?? 0)
            out.speed = nil
            out.bearing = nil
            out.altitude = nil
            out.privacyZone = zone.id
            return out
        }
        guard let radius = config.blurRadiusMeters else { return out }
        (out.latitude, out.longitude) = Self.snap(latitude: location.latitude, longitude: location.longitude, cell: radius)
        out.accuracy = max(location.accuracy ?? 0, radius)
        return out
    }

    /// The rounded centre of the grid cell (`cell` metres on a side) holding the position.
    /// Rows are `cell` metres of latitude; each row's columns are `cell` metres wide at the
    /// row's centre latitude. The result is rounded to a tenth of the cell's size in degrees,
    /// which keeps it inside its cell: snapping it again returns it unchanged.
    static func snap(latitude: Double, longitude: Double, cell: Double) -> (Double, Double) {
        let latStep = cell / metersPerDegree
        let row = (latitude / latStep).rounded(.down)
        let centreLat = min(90, max(-90, (row + 0.5) * latStep))
        let lonStep = min(360, cell / (metersPerDegree * max(0.01, cos(centreLat * .pi / 180))))
        let column = (longitude / lonStep).rounded(.down)
        let centreLon = min(180, max(-180, (column + 0.5) * lonStep))
        return (round(centreLat, toTenthOf: latStep), round(centreLon, toTenthOf: lonStep))
    }

    /// `value` rounded to the decimal digits of `step / 10` (so the cell's width is the precision).
    static func round(_ value: Double, toTenthOf step: Double) -> Double {
        let digits = max(0, min(12, Int((-log10(step / 10)).rounded(.up))))
        let scale = pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }
}
