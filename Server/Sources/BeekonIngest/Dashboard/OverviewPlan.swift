import Foundation

/// One bucket's bookkeeping row in `track_overview_buckets`.
struct OverviewBucket: Sendable {
    /// `TrackOverview.bucket(_:)` of its fixes.
    var bucket: Int64
    /// Raw fixes in the bucket when it was last rebuilt.
    var fixes: Int
    /// Fixes arrived since the last rebuild: its tier rows are stale.
    var dirty: Bool
    /// The box of its raw fixes at the last rebuild.
    var bounds: TrackBounds?
}

/// A window of a device's history read through the overview tier.
package struct OverviewSlice: Sendable {
    /// Tier points of levels `≤ level` for clean buckets wholly inside the window, and every
    /// raw fix of the other buckets (dirty, or cut by the window's ends), in time order.
    package var points: [TrackPoint]
    /// Raw fixes in the window.
    package var rawCount: Int
    /// The box of every raw fix in the window (nil when there is none).
    package var bounds: TrackBounds?
    /// The tier level read.
    package var level: Int
    /// Buckets answered from raw fixes instead of the tier.
    package var rawBuckets: Int
}

/// How a store answers `HistoryStore.overview`: which buckets come from the tier and
/// which from raw fixes (dirty ones, the "real-time" part, and the two cut by the
/// window's ends), then the merge. The store only runs the SQL; this decides.
struct OverviewPlan: Sendable {
    let from: Int64
    let to: Int64
    let buckets: [OverviewBucket]
    /// Buckets answered from raw fixes.
    let rawBuckets: Set<Int64>
    /// Time ranges `[start, end)` to read raw, clipped to the window, contiguous buckets joined.
    let rawRanges: [(start: Int64, end: Int64)]

    /// The first and last bucket a window touches (for the bucket-row query).
    static func bucketRange(from: Int64, to: Int64) -> (Int64, Int64) {
        (TrackOverview.bucket(from), TrackOverview.bucket(max(from, to - 1)))
    }

    init(from: Int64, to: Int64, buckets: [OverviewBucket]) {
        self.from = from
        self.to = to
        self.buckets = buckets
        let first = TrackOverview.bucket(from)
        let last = TrackOverview.bucket(max(from, to - 1))
        let b = TrackOverview.bucketMillis
        var raw = Set<Int64>()
        for row in buckets where row.dirty || (row.bucket == first && from != first * b) || (row.bucket == last && to != (last + 1) * b) {
            raw.insert(row.bucket)
        }
        rawBuckets = raw
        var ranges: [(start: Int64, end: Int64)] = []
        for bucket in raw.sorted() {
            let start = max(from, bucket * b)
            let end = min(to, (bucket + 1) * b)
            if let last = ranges.last, last.end == start {
                ranges[ranges.count - 1].end = end
            } else {
                ranges.append((start, end))
            }
        }
        rawRanges = ranges
    }

    /// The raw count and box of the window, from the clean buckets' rows and the raw fixes read.
    func summary(raw: [TrackPoint]) -> (count: Int, bounds: TrackBounds?) {
        var count = raw.count
        var bounds = TrackBounds(raw)
        for row in buckets where !rawBuckets.contains(row.bucket) {
            count += row.fixes
            if let box = row.bounds { bounds = box.union(bounds) }
        }
        return (count, bounds)
    }

    /// Tier points (in (bucket, seq) order) of clean buckets and raw fixes, merged in time order.
    func merge(tier: [TrackPoint], raw: [TrackPoint], level: Int) -> OverviewSlice {
        var points: [TrackPoint] = []
        points.reserveCapacity(tier.count + raw.count)
        var i = 0
        var j = 0
        let kept = tier.filter { !rawBuckets.contains(TrackOverview.bucket($0.millis)) }
        while i < kept.count || j < raw.count {
            if j == raw.count || (i < kept.count && kept[i].millis < raw[j].millis) {
                points.append(kept[i])
                i += 1
            } else {
                points.append(raw[j])
                j += 1
            }
        }
        let (count, bounds) = summary(raw: raw)
        return OverviewSlice(points: points, rawCount: count, bounds: bounds, level: level, rawBuckets: rawBuckets.count)
    }
}
