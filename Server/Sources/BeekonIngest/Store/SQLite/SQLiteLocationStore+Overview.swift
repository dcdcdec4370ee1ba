import BeekonWire
import Foundation
import GRDB

/// The overview tier (migration `v7-track-overview`, see `TrackOverview`): bucket rows
/// (`dirty` counts ingests since the last rebuild) and the level-of-detail points.
/// Existing fixes get dirty bucket rows, rebuilt in the background after the upgrade.
enum SQLiteOverviewSchema {
    static let v7 = """
        CREATE TABLE track_overview_buckets (
            install_id TEXT NOT NULL, bucket INTEGER NOT NULL, fixes INTEGER NOT NULL DEFAULT 0,
            dirty INTEGER NOT NULL DEFAULT 0, south REAL, west REAL, north REAL, east REAL,
            PRIMARY KEY (install_id, bucket)) WITHOUT ROWID;
        CREATE INDEX track_overview_dirty ON track_overview_buckets (dirty) WHERE dirty > 0;
        CREATE TABLE track_overview (
            install_id TEXT NOT NULL, bucket INTEGER NOT NULL, seq INTEGER NOT NULL, level INTEGER NOT NULL,
            ts INTEGER NOT NULL, latitude REAL NOT NULL, longitude REAL NOT NULL,
            PRIMARY KEY (install_id, bucket, seq)) WITHOUT ROWID;
        CREATE INDEX track_overview_level ON track_overview (install_id, level, ts);
        INSERT INTO track_overview_buckets (install_id, bucket, dirty)
            SELECT DISTINCT install_id, \(TrackOverview.bucketSQL("ts")), 1 FROM locations;
        """
}

extension SQLiteLocationStore: HistoryStore {
    /// This store: it answers the dashboard's history reads itself.
    package var history: any HistoryStore { self }

    /// Every fix of a device with time in `[fromMillis, toMillis)`, in time order, at most `limit` (`HistoryStore`).
    package func trackPoints(installId: UUID, fromMillis: Int64, toMillis: Int64, limit: Int) async throws(StoreError) -> [TrackPoint] {
        try await run { db in try Self.raw(db, installId.wireString, fromMillis, toMillis, limit: limit) }
    }

    /// A window read through the overview tier, in one snapshot (`HistoryStore`).
    package func overview(
        installId: UUID, fromMillis: Int64, toMillis: Int64, level: @escaping @Sendable (TrackBounds?) -> Int
    ) async throws(StoreError) -> OverviewSlice {
        try await run { db in
            let install = installId.wireString
            let (first, last) = OverviewPlan.bucketRange(from: fromMillis, to: toMillis)
            let buckets = try Row.fetchAll(
                db,
                sql: """
                    SELECT bucket, fixes, dirty, south, west, north, east FROM track_overview_buckets
                    WHERE install_id = ? AND bucket >= ? AND bucket <= ? ORDER BY bucket
                    """, arguments: [install, first, last]
            ).map { row in
                let south: Double? = row[3]
                return OverviewBucket(
                    bucket: row[0], fixes: row[1], dirty: (row[2] as Int) > 0,
                    bounds: south.map { TrackBounds(south: $0, west: row[4], north: row[5], east: row[6]) })
            }
            let plan = OverviewPlan(from: fromMillis, to: toMillis, buckets: buckets)
            var raw: [TrackPoint] = []
            for range in plan.rawRanges { raw += try Self.raw(db, install, range.start, range.end, limit: Int.max) }
            let chosen = min(TrackOverview.maxLevel, max(0, level(plan.summary(raw: raw).bounds)))
            var tier: [TrackPoint] = []
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT ts, latitude, longitude FROM track_overview INDEXED BY track_overview_level
                    WHERE install_id = ? AND level IN (\((0...chosen).map(String.init).joined(separator: ","))) AND ts >= ? AND ts < ?
                    ORDER BY bucket, seq
                    """, arguments: [install, fromMillis, toMillis])
            while let row = try rows.next() { tier.append(TrackPoint(millis: row[0], latitude: row[1], longitude: row[2])) }
            return plan.merge(tier: tier, raw: raw, level: chosen)
        }
    }

    /// Rebuilds up to `limit` stale buckets of the overview tier; how many it rebuilt (`HistoryStore`).
    package func rebuildOverview(limit: Int, settledBefore: Int64) async throws(StoreError) -> Int {
        let open = TrackOverview.firstOpenBucket(settledBefore: settledBefore)
        return try await write { db in
            let stale = try Row.fetchAll(
                db, sql: "SELECT install_id, bucket FROM track_overview_buckets WHERE dirty > 0 AND bucket < ? LIMIT ?",
                arguments: [open, limit])
            let insert = try db.cachedStatement(
                sql: "INSERT INTO track_overview (install_id, bucket, seq, level, ts, latitude, longitude) VALUES (?, ?, ?, ?, ?, ?, ?)")
            for row in stale {
                let install: String = row[0]
                let bucket: Int64 = row[1]
                let start = bucket * TrackOverview.bucketMillis
                let points = try Self.raw(db, install, start, start + TrackOverview.bucketMillis, limit: Int.max)
                try db.execute(sql: "DELETE FROM track_overview WHERE install_id = ? AND bucket = ?", arguments: [install, bucket])
                guard let box = TrackBounds(points) else {
                    try db.execute(
                        sql: "DELETE FROM track_overview_buckets WHERE install_id = ? AND bucket = ?", arguments: [install, bucket])
                    continue
                }
                for (seq, level) in TrackOverview.levels(points).enumerated() {
                    guard let level else { continue }
                    let p = points[seq]
                    try insert.execute(arguments: [install, bucket, seq, level, p.millis, p.latitude, p.longitude])
                }
                try db.execute(
                    sql: """
                        UPDATE track_overview_buckets SET fixes = ?, dirty = 0, south = ?, west = ?, north = ?, east = ?
                        WHERE install_id = ? AND bucket = ?
                        """, arguments: [points.count, box.south, box.west, box.north, box.east, install, bucket])
            }
            return stale.count
        }
    }

    /// A device's raw fixes in `[from, to)`, in (time, id) order.
    static func raw(_ db: Database, _ install: String, _ from: Int64, _ to: Int64, limit: Int) throws -> [TrackPoint] {
        var out: [TrackPoint] = []
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT ts, latitude, longitude FROM locations WHERE install_id = ? AND ts >= ? AND ts < ? ORDER BY ts, id LIMIT ?
                """, arguments: [install, from, to, limit == Int.max ? -1 : limit])
        while let row = try rows.next() { out.append(TrackPoint(millis: row[0], latitude: row[1], longitude: row[2])) }
        return out
    }
}
