import BeekonWire
import Foundation
import PostgresNIO

/// The overview tier (schema version 7, "v7-track-overview"; see `TrackOverview`).
/// Existing fixes get dirty bucket rows, rebuilt in the background after the upgrade.
enum PostgresOverviewSchema {
    static let v7 = [
        """
        CREATE TABLE track_overview_buckets (
            install_id UUID NOT NULL, bucket BIGINT NOT NULL, fixes INT NOT NULL DEFAULT 0,
            dirty INT NOT NULL DEFAULT 0, south DOUBLE PRECISION, west DOUBLE PRECISION,
            north DOUBLE PRECISION, east DOUBLE PRECISION, PRIMARY KEY (install_id, bucket))
        """,
        "CREATE INDEX track_overview_dirty ON track_overview_buckets (install_id, bucket) WHERE dirty > 0",
        """
        CREATE TABLE track_overview (
            install_id UUID NOT NULL, bucket BIGINT NOT NULL, seq INT NOT NULL, level INT NOT NULL,
            ts BIGINT NOT NULL, latitude DOUBLE PRECISION NOT NULL, longitude DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (install_id, bucket, seq))
        """,
        "CREATE INDEX track_overview_level ON track_overview (install_id, level, ts)",
        """
        INSERT INTO track_overview_buckets (install_id, bucket, dirty)
        SELECT DISTINCT install_id, \(TrackOverview.bucketSQL("ts")), 1 FROM locations
        """,
    ]
}

extension PostgresLocationStore: HistoryStore {
    /// This store: it answers the dashboard's history reads itself.
    package var history: any HistoryStore { self }

    /// Every fix of a device with time in `[fromMillis, toMillis)`, in time order, at most `limit` (`HistoryStore`).
    package func trackPoints(installId: UUID, fromMillis: Int64, toMillis: Int64, limit: Int) async throws(StoreError) -> [TrackPoint] {
        try await perform { conn in try await self.raw(conn, installId, fromMillis, toMillis, limit: limit) }
    }

    /// A window read through the overview tier, in one snapshot (`HistoryStore`).
    package func overview(
        installId: UUID, fromMillis: Int64, toMillis: Int64, level: @escaping @Sendable (TrackBounds?) -> Int
    ) async throws(StoreError) -> OverviewSlice {
        try await transaction { conn in
            // One snapshot for the bucket rows, the raw fixes and the tier rows.
            try await conn.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: self.logger)
            let (first, last) = OverviewPlan.bucketRange(from: fromMillis, to: toMillis)
            var buckets: [OverviewBucket] = []
            for try await (bucket, fixes, dirty, s, w, n, e) in try await conn.query(
                """
                SELECT bucket, fixes, dirty, south, west, north, east FROM track_overview_buckets
                WHERE install_id = \(installId) AND bucket >= \(first) AND bucket <= \(last) ORDER BY bucket
                """, logger: self.logger
            ).decode((Int64, Int32, Int32, Double?, Double?, Double?, Double?).self) {
                let box = s.map { TrackBounds(south: $0, west: w ?? 0, north: n ?? 0, east: e ?? 0) }
                buckets.append(OverviewBucket(bucket: bucket, fixes: Int(fixes), dirty: dirty > 0, bounds: box))
            }
            let plan = OverviewPlan(from: fromMillis, to: toMillis, buckets: buckets)
            var raw: [TrackPoint] = []
            for range in plan.rawRanges { raw += try await self.raw(conn, installId, range.start, range.end, limit: Int.max) }
            let chosen = min(TrackOverview.maxLevel, max(0, level(plan.summary(raw: raw).bounds)))
            var tier: [TrackPoint] = []
            for try await (ts, lat, lon) in try await conn.query(
                """
                SELECT ts, latitude, longitude FROM track_overview
                WHERE install_id = \(installId) AND level = ANY(\(Array(0...chosen))) AND ts >= \(fromMillis) AND ts < \(toMillis)
                ORDER BY bucket, seq
                """, logger: self.logger
            ).decode((Int64, Double, Double).self) { tier.append(TrackPoint(millis: ts, latitude: lat, longitude: lon)) }
            return plan.merge(tier: tier, raw: raw, level: chosen)
        }
    }

    /// Rebuilds up to `limit` stale buckets of the overview tier; how many it rebuilt (`HistoryStore`).
    ///
    /// An ingest marking a bucket (`o` in `PostgresIngestStatement`) must not wait for a
    /// rebuild: it would wait holding the event log's lock, so every instance's ingest would
    /// queue behind one bucket's simplification (issue 32: uploads answered 503 after the
    /// operation timeout under load). So a rebuild claims its buckets with transaction-scoped
    /// advisory locks (one rebuilder per bucket across instances), not row locks; it reads
    /// each bucket's mark count `d` first, its fixes after, and only at the very end, just
    /// before its commit, lowers each mark by `d`: a mark made meanwhile keeps the bucket
    /// stale, so it is rebuilt again. The bucket rows are updated in (install, bucket) order,
    /// the order an ingest marks them in.
    package func rebuildOverview(limit: Int, settledBefore: Int64) async throws(StoreError) -> Int {
        let open = TrackOverview.firstOpenBucket(settledBefore: settledBefore)
        return try await transaction { conn in
            var stale: [(UUID, Int64, Int32)] = []
            for try await row in try await conn.query(
                """
                SELECT install_id, bucket, dirty FROM track_overview_buckets
                WHERE dirty > 0 AND bucket < \(open) AND pg_try_advisory_xact_lock(74657003, hashtext(install_id::text || ':' || bucket::text))
                LIMIT \(limit)
                """,
                logger: self.logger
            ).decode((UUID, Int64, Int32).self) { stale.append(row) }
            var done: [(install: UUID, bucket: Int64, marks: Int32, fixes: Int32, box: TrackBounds?)] = []
            for (install, bucket, marks) in stale {
                let start = bucket * TrackOverview.bucketMillis
                let points = try await self.raw(conn, install, start, start + TrackOverview.bucketMillis, limit: Int.max)
                try await conn.query("DELETE FROM track_overview WHERE install_id = \(install) AND bucket = \(bucket)", logger: self.logger)
                let box = TrackBounds(points)
                done.append((install, bucket, marks, Int32(points.count), box))
                guard box != nil else { continue }
                var seqs: [Int32] = []
                var levels: [Int32] = []
                for (seq, level) in TrackOverview.levels(points).enumerated() {
                    guard let level else { continue }
                    seqs.append(Int32(seq))
                    levels.append(Int32(level))
                }
                let kept = seqs.map { points[Int($0)] }
                try await conn.query(
                    """
                    INSERT INTO track_overview (install_id, bucket, seq, level, ts, latitude, longitude)
                    SELECT \(install), \(bucket), u.seq, u.level, u.ts, u.lat, u.lon
                    FROM unnest(\(seqs)::int4[], \(levels)::int4[], \(kept.map(\.millis))::int8[],
                                \(kept.map(\.latitude))::float8[], \(kept.map(\.longitude))::float8[]) AS u(seq, level, ts, lat, lon)
                    """, logger: self.logger)
            }
            for b in done.sorted(by: { ($0.install.uuidString, $0.bucket) < ($1.install.uuidString, $1.bucket) }) {
                if let box = b.box {
                    try await conn.query(
                        """
                        UPDATE track_overview_buckets SET fixes = \(b.fixes), dirty = dirty - \(b.marks), south = \(box.south),
                            west = \(box.west), north = \(box.north), east = \(box.east)
                        WHERE install_id = \(b.install) AND bucket = \(b.bucket)
                        """, logger: self.logger)
                } else {
                    // No fixes left (and none marked since): the bucket row goes.
                    try await conn.query(
                        """
                        DELETE FROM track_overview_buckets
                        WHERE install_id = \(b.install) AND bucket = \(b.bucket) AND dirty <= \(b.marks)
                        """, logger: self.logger)
                }
            }
            return stale.count
        }
    }

    /// A device's raw fixes in `[from, to)`, in (time, id) order.
    func raw(_ conn: PostgresConnection, _ install: UUID, _ from: Int64, _ to: Int64, limit: Int) async throws -> [TrackPoint] {
        var out: [TrackPoint] = []
        for try await (ts, lat, lon) in try await conn.query(
            """
            SELECT ts, latitude, longitude FROM locations
            WHERE install_id = \(install) AND ts >= \(from) AND ts < \(to) ORDER BY ts, id LIMIT \(Int64(min(limit, Int(Int64.max))))
            """, logger: self.logger
        ).decode((Int64, Double, Double).self) { out.append(TrackPoint(millis: ts, latitude: lat, longitude: lon)) }
        return out
    }
}
