import BeekonPrimitives
import BeekonWire
@testable import Beekon
import Foundation

/// The point `meters` from (lat, lon) along `bearingDegrees`, on the SDK's sphere.
func destination(_ lat: Double, _ lon: Double, bearingDegrees: Double, meters: Double) -> (lat: Double, lon: Double) {
    let delta = meters / Geodesy.earthRadiusMeters
    let theta = bearingDegrees * .pi / 180
    let phi1 = lat * .pi / 180
    let lambda1 = lon * .pi / 180
    let phi2 = asin(min(1, max(-1, sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))))
    let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
    var lon2 = lambda2 * 180 / .pi
    lon2 = (lon2 + 540).truncatingRemainder(dividingBy: 360) - 180
    return (phi2 * 180 / .pi, lon2)
}

/// Sequential UUIDs for deterministic event ids.
final class GeofenceTestIDs: @unchecked Sendable {
    private var n: UInt64 = 0
    func next() -> UUID {
        n += 1
        return UUIDv7Generator.make(millis: 1_700_000_000_000, counter: 0, randomBits: n)
    }
}
