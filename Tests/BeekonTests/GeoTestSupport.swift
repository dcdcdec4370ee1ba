@testable import Beekon
import Foundation

/// A small seeded generator (SplitMix64) so random geometry tests are reproducible.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A normally distributed value (Box–Muller).
    mutating func gaussian(sigma: Double) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return sigma * sqrt(-2 * log(u1)) * cos(2 * .pi * u2)
    }
}

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
