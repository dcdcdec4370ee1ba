import Foundation

/// The positions of a device's history, lean (time and coordinates only), for the map,
/// and the overview tier that makes long windows cheap (see `TrackOverview`).
package protocol HistoryStore: Sendable {
    /// Every fix of a device with time in `[fromMillis, toMillis)`, in time order, at most `limit`.
    func trackPoints(installId: UUID, fromMillis: Int64, toMillis: Int64, limit: Int) async throws(StoreError) -> [TrackPoint]

    /// A window read through the overview tier, in one consistent snapshot: the tier level
    /// is chosen by `level` from the window's box (so a view can be fitted in one request).
    func overview(
        installId: UUID, fromMillis: Int64, toMillis: Int64, level: @escaping @Sendable (TrackBounds?) -> Int
    ) async throws(StoreError) -> OverviewSlice

    /// Rebuilds the tier rows of up to `limit` buckets that received fixes since their last
    /// rebuild; returns how many it rebuilt (0: nothing is stale). Safe to run from several
    /// instances at once.
    func rebuildOverview(limit: Int) async throws(StoreError) -> Int
}
