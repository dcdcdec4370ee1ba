import Foundation

/// The positions of a device's history, lean (time and coordinates only), for the map.
public protocol HistoryStore: Sendable {
    /// Every fix of a device with time in `[fromMillis, toMillis)`, in time order, at most `limit`.
    func trackPoints(installId: UUID, fromMillis: Int64, toMillis: Int64, limit: Int) async throws(StoreError) -> [TrackPoint]
}
