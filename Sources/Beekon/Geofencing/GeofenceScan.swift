import BeekonPrimitives
import Foundation

/// The brute-force reference for ``GeofenceIndex``: the same queries answered
/// by checking every fence. Used by the tests and the benchmark to verify the
/// index and to measure what it saves; the SDK itself never scans.
struct GeofenceScan: Sendable {
    private(set) var fencesByID: [String: Geofence] = [:]

    /// Creates a scan over `fences` (later ids replace earlier ones).
    init(_ fences: [Geofence] = []) {
        for f in fences { fencesByID[f.id] = f }
    }

    /// Inserts `fence`, replacing any fence with the same id.
    mutating func insert(_ fence: Geofence) { fencesByID[fence.id] = fence }

    /// Removes the fence with `id`; an unknown id is ignored.
    mutating func remove(id: String) { fencesByID[id] = nil }

    /// The ids of the fences whose centre is within `radiusMeters + extraMeters` of the point, sorted.
    func ids(within extraMeters: Double = 0, ofLatitude latitude: Double, longitude: Double) -> [String] {
        fencesByID.values.filter {
            Geodesy.distance(latitude, longitude, $0.latitude, $0.longitude) <= $0.radiusMeters + extraMeters
        }.map(\.id).sorted()
    }
}
