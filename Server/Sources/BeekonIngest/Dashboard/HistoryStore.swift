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
    /// rebuild and ended at or before `settledBefore` (milliseconds since 1970); returns how many
    /// it rebuilt (0: nothing settled is stale). Safe to run from several instances at once.
    ///
    /// A bucket still receiving fixes is left stale on purpose (issue 32): reads answer a stale
    /// bucket from its raw fixes, exactly, and rebuilding it after every upload would simplify
    /// the same growing bucket over and over (at 1,000 devices, 9 % of the server's CPU, and the
    /// one SQLite writer taken from the uploads).
    func rebuildOverview(limit: Int, settledBefore: Int64) async throws(StoreError) -> Int
}

extension HistoryStore {
    /// Rebuilds up to `limit` stale buckets whatever their time (tests and benchmarks that
    /// want the whole tier current).
    package func rebuildOverview(limit: Int) async throws(StoreError) -> Int {
        try await rebuildOverview(limit: limit, settledBefore: .max)
    }
}
