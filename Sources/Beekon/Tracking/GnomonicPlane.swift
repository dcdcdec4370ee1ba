import BeekonPrimitives
import Foundation

/// The gnomonic projection centred on one point (the admission window's anchor): every
/// great circle through the plane is a straight line, and every scale factor is ≥ 1
/// (1/cos c radially squared, 1/cos c across, c the central angle), so a distance measured
/// in the plane is never shorter than the same distance on the sphere. A tolerance checked
/// in this plane therefore holds on the sphere (BY-9), with no projection margin.
struct GnomonicPlane: Sendable {
    private let centre: (x: Double, y: Double, z: Double)
    private let east: (x: Double, y: Double)
    private let north: (x: Double, y: Double, z: Double)

    init(latitude: Double, longitude: Double) {
        let p = latitude * .pi / 180
        let l = longitude * .pi / 180
        centre = (cos(p) * cos(l), cos(p) * sin(l), sin(p))
        east = (-sin(l), cos(l))
        north = (-sin(p) * cos(l), -sin(p) * sin(l), cos(p))
    }

    /// Plane coordinates in metres (x east, y north), or nil for a point 60° or more away
    /// (the projection only covers a hemisphere; no admission window spans such a jump).
    func project(latitude: Double, longitude: Double) -> (x: Double, y: Double)? {
        let p = latitude * .pi / 180
        let l = longitude * .pi / 180
        let v = (cos(p) * cos(l), cos(p) * sin(l), sin(p))
        let d = v.0 * centre.x + v.1 * centre.y + v.2 * centre.z
        guard d > 0.5 else { return nil }
        let r = Geodesy.earthRadiusMeters / d
        return ((v.0 * east.x + v.1 * east.y) * r, (v.0 * north.x + v.1 * north.y + v.2 * north.z) * r)
    }
}
