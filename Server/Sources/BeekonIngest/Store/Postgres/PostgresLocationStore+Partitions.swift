import BeekonWire
import Foundation
import PostgresNIO

/// Issue 32: the PostgreSQL `locations` table partitioned by fix time (schema version 10,
/// "v10-partitioned-locations").
///
/// - **Key: the fix time `ts`**, not the receive time: every read of fixes (the read API's
///   fixes and track, the dashboard's windows, the overview tier's raw reads) bounds `ts`, so
///   the planner prunes to the weeks a window touches; retention promises "fixes older than N
///   days are gone", which is a statement about `ts`.
/// - **Weekly partitions** (Monday 00:00 UTC to the next Monday), created by the server at start
///   and hourly for last week, this week and the next two. Retention is off by default, so
///   partitions accumulate: weekly keeps a year at 53 partitions where daily would be 365, and the
///   reads that bound no time (a device's newest fix, counts) visit every partition's index.
/// - **A default partition** takes any fix no weekly partition covers (a device clock years off,
///   an offline device's old fixes), so an insert never fails; a weekly partition created later
///   takes its rows over from the default partition.
/// - **Dedupe**: PostgreSQL needs the partition key in every unique index, and a fix id unique
///   only together with its time would let the same id be stored twice with two times (on two
///   sides of a boundary). So the unpartitioned table `location_ids` (primary key `id`) is the
///   dedupe key: a row trigger on `locations` claims the id there first and skips the row when
///   it is taken. Concurrent claims of one id wait on each other exactly as the old primary key
///   did; retention removes the ids of the fixes it drops.
enum PostgresPartitionSchema {
    /// Converts the unpartitioned table in place: the old table becomes the partition of every
    /// time up to the end of the week of its newest fix (its indexes are reused, nothing is
    /// copied; only the ids are copied into `location_ids`, and attaching scans the old table
    /// once, under an exclusive lock: on a large table, plan the upgrade as downtime); fixes
    /// dated later than now (a device clock ahead) move to the default partition. Needs
    /// PostgreSQL 13 or later (a row trigger on a partitioned table): on an older server the
    /// migration stops at its first statement with a message saying so, and changes nothing.
    static let v10 = [
        """
        DO $$ BEGIN
            IF current_setting('server_version_num')::int < 130000 THEN
                RAISE EXCEPTION 'beekon-ingest needs PostgreSQL 13 or later (schema version 10 partitions locations by week); this server is %',
                    current_setting('server_version');
            END IF;
        END $$
        """,
        "ALTER TABLE locations RENAME TO locations_legacy",
        "ALTER INDEX locations_device_time RENAME TO locations_legacy_device_time",
        "ALTER INDEX locations_session_time RENAME TO locations_legacy_session_time",
        "ALTER TABLE locations_legacy RENAME CONSTRAINT locations_pkey TO locations_legacy_pkey",
        "CREATE TABLE locations (LIKE locations_legacy INCLUDING DEFAULTS) PARTITION BY RANGE (ts)",
        "CREATE INDEX locations_device_time ON locations (install_id, ts, id)",
        "CREATE INDEX locations_session_time ON locations (session_id, ts, id)",
        "CREATE TABLE locations_default PARTITION OF locations DEFAULT",
        "CREATE TABLE location_ids (id UUID PRIMARY KEY, install_id UUID NOT NULL)",
        "INSERT INTO location_ids (id, install_id) SELECT id, install_id FROM locations_legacy",
        """
        DO $$
        DECLARE
            newest BIGINT;
            bound BIGINT;
        BEGIN
            SELECT max(ts) INTO newest FROM locations_legacy
            WHERE ts <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint + \(FixClock.futureToleranceMillis);
            IF newest IS NULL THEN
                INSERT INTO locations SELECT * FROM locations_legacy;
                DROP TABLE locations_legacy;
            ELSE
                bound := floor((newest - \(LocationPartitions.mondayOffset))::numeric / \(LocationPartitions.weekMillis))::bigint
                         * \(LocationPartitions.weekMillis) + \(LocationPartitions.mondayOffset + LocationPartitions.weekMillis);
                INSERT INTO locations SELECT * FROM locations_legacy WHERE ts >= bound;
                DELETE FROM locations_legacy WHERE ts >= bound;
                EXECUTE format('ALTER TABLE locations ATTACH PARTITION locations_legacy FOR VALUES FROM (MINVALUE) TO (%s)', bound);
            END IF;
        END $$
        """,
        """
        CREATE FUNCTION beekon_claim_location_id() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO location_ids (id, install_id) VALUES (NEW.id, NEW.install_id) ON CONFLICT (id) DO NOTHING;
            IF FOUND THEN
                RETURN NEW;
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER locations_claim_id BEFORE INSERT ON locations
        FOR EACH ROW EXECUTE FUNCTION beekon_claim_location_id()
        """,
    ]
}

/// The weekly partitions of `locations`: their bounds and names.
enum LocationPartitions {
    /// One week in milliseconds.
    static let weekMillis: Int64 = 7 * 86_400_000
    /// 1970-01-05, the first Monday after the epoch (a Thursday), in milliseconds.
    static let mondayOffset: Int64 = 4 * 86_400_000
    /// Weekly partitions kept ready after the current week.
    static let weeksAhead: Int64 = 2
    /// The event log's transaction lock is 74657002; this one serialises maintenance across instances.
    static let maintenanceLock = 74_657_003
    /// The longest one statement of a maintenance run may take (deleting a week's ids, the
    /// scan of an attach); longer, and the run fails, rolls back and is retried an hour later.
    static let maintenanceStatementTimeout = "15min"

    /// The start (Monday 00:00 UTC) of the week holding `millis`.
    static func weekStart(_ millis: Int64) -> Int64 {
        let shifted = millis - mondayOffset
        let weeks = shifted >= 0 ? shifted / weekMillis : -((-shifted + weekMillis - 1) / weekMillis)
        return weeks * weekMillis + mondayOffset
    }

    /// The partition name for the week starting at `start`: `locations_wYYYYMMDD`.
    static func name(weekStarting start: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let d = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(start) / 1000))
        return String(format: "locations_w%04d%02d%02d", d.year ?? 0, d.month ?? 0, d.day ?? 0)
    }

    /// One attached partition: its name and range (`nil` lower bound: MINVALUE); the default
    /// partition has neither bound.
    struct Partition: Equatable {
        var name: String
        var from: Int64?
        var to: Int64?
        var isDefault: Bool
    }

    /// Parses `pg_get_expr(relpartbound)`: `DEFAULT` or `FOR VALUES FROM (x) TO (y)`, where a
    /// bound is a number (possibly quoted), `MINVALUE` or `MAXVALUE`.
    static func partition(name: String, bound: String) -> Partition? {
        if bound == "DEFAULT" { return Partition(name: name, from: nil, to: nil, isDefault: true) }
        func value(after keyword: String) -> Int64?? {
            guard let start = bound.range(of: keyword + " (")?.upperBound,
                let end = bound[start...].firstIndex(of: ")")
            else { return nil }
            let text = bound[start..<end].trimmingCharacters(in: CharacterSet(charactersIn: "' "))
            if text == "MINVALUE" || text == "MAXVALUE" { return .some(nil) }
            guard let v = Int64(text) else { return nil }
            return .some(v)
        }
        guard let from = value(after: "FROM"), let to = value(after: "TO"), let upper = to else { return nil }
        return Partition(name: name, from: from, to: upper, isDefault: false)
    }
}

/// What one run of `PostgresLocationStore.maintainPartitions` did.
package struct PartitionMaintenance: Sendable, Equatable {
    /// Weekly partitions created (names), oldest first.
    package var created: [String] = []
    /// Partitions dropped by retention (names), oldest first.
    package var dropped: [String] = []
    /// Fixes of the dropped partitions kept because each is its device's newest (at most one per
    /// device; they move to the default partition).
    package var keptNewest: Int = 0
}

extension PostgresLocationStore {
    /// Creates the weekly partitions of `locations` for last week, this week and the next two
    /// (by `now`; rows the default partition already holds for such a week move into it), and,
    /// with `retentionDays`, drops every partition whose whole week ended more than that many
    /// days before `now`, together with the default partition's fixes older than the cutoff.
    ///
    /// A device's newest fix is never lost to retention (`last_fix` of the read API, the
    /// dashboard and locate show where a device was last seen, and a device silent for longer
    /// than the retention is exactly the one someone looks for): when every fix of a device is
    /// older than the cutoff, its newest one moves to the default partition and stays until a
    /// newer fix of that device arrives and the old one falls due again.
    ///
    /// Retention also marks the overview tier's buckets before the cutoff stale (they are redrawn
    /// from what is left) and deletes their simplified points, so no dropped fix is drawn again.
    ///
    /// One instance at a time (an advisory lock); a run that waits more than 10 s for a table
    /// lock fails and the next run retries. The run is not bound by the store's per-request
    /// operation timeout (deleting a week's ids can take longer than a request may): it has a
    /// statement timeout of its own, `LocationPartitions.maintenanceStatementTimeout`.
    package func maintainPartitions(now: Date, retentionDays: Int?) async throws(StoreError) -> PartitionMaintenance {
        let nowMillis = WireTimestamp(now).millis
        do {
            return try await client.withTransaction(logger: logger) { conn in
                try await self.maintainPartitions(conn, nowMillis: nowMillis, retentionDays: retentionDays)
            }
        } catch {
            throw Self.storeError(error)
        }
    }

    private func maintainPartitions(_ conn: PostgresConnection, nowMillis: Int64, retentionDays: Int?) async throws
        -> PartitionMaintenance
    {
        try await conn.query("SELECT pg_advisory_xact_lock(\(LocationPartitions.maintenanceLock))", logger: self.logger)
        try await conn.query("SET LOCAL lock_timeout = '10s'", logger: self.logger)
        try await conn.query(
            PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = '\(LocationPartitions.maintenanceStatementTimeout)'"),
            logger: self.logger)
        var report = PartitionMaintenance()
        var partitions = try await self.partitions(conn)
        let current = LocationPartitions.weekStart(nowMillis)
        let cutoff = retentionDays.map { nowMillis - Int64($0) * 86_400_000 }
        for week in -1...LocationPartitions.weeksAhead {
            let from = current + week * LocationPartitions.weekMillis
            let to = from + LocationPartitions.weekMillis
            // A week already due for retention is not made again (it would be dropped at once).
            if let cutoff, to <= cutoff { continue }
            let overlaps = partitions.contains { p in !p.isDefault && (p.from ?? .min) < to && from < (p.to ?? .max) }
            guard !overlaps else { continue }
            let name = LocationPartitions.name(weekStarting: from)
            try await self.createPartition(conn, name: name, from: from, to: to)
            partitions.append(.init(name: name, from: from, to: to, isDefault: false))
            report.created.append(name)
        }
        if let cutoff {
            let due = partitions.filter { !$0.isDefault && ($0.to ?? .max) <= cutoff }.sorted { ($0.to ?? 0) < ($1.to ?? 0) }
            report.keptNewest = try await self.drop(conn, due.map(\.name), cutoff: cutoff)
            report.dropped = due.map(\.name)
            try await self.retireOverview(conn, cutoff: cutoff)
        }
        return report
    }

    /// The overview tier forgets what retention dropped: the simplified points before `cutoff`
    /// go, and every bucket that starts before it is marked stale, so the dashboard reads those
    /// buckets from the fixes that are left (a device's kept newest fix) until the rebuild
    /// redraws or removes them.
    func retireOverview(_ conn: PostgresConnection, cutoff: Int64) async throws {
        try await conn.query("DELETE FROM track_overview WHERE ts < \(cutoff)", logger: logger)
        try await conn.query(
            """
            UPDATE track_overview_buckets SET dirty = dirty + 1
            WHERE bucket * \(TrackOverview.bucketMillis) < \(cutoff)
            """, logger: logger)
    }

    /// The attached partitions of `locations`.
    func partitions(_ conn: PostgresConnection) async throws -> [LocationPartitions.Partition] {
        var out: [LocationPartitions.Partition] = []
        for try await (name, bound) in try await conn.query(
            """
            SELECT c.relname::text, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'locations'::regclass
            """, logger: logger
        ).decode((String, String).self) {
            guard let p = LocationPartitions.partition(name: name, bound: bound) else {
                throw StoreError.queryFailed("unreadable partition bound of \(name): \(bound)")
            }
            out.append(p)
        }
        return out
    }

    /// Creates a weekly partition: a new table takes the default partition's rows of the week,
    /// then is attached (which takes only a share lock on `locations`, so ingest goes on).
    func createPartition(_ conn: PostgresConnection, name: String, from: Int64, to: Int64) async throws {
        try await conn.query(PostgresQuery(unsafeSQL: "CREATE TABLE \(name) (LIKE locations INCLUDING DEFAULTS)"), logger: logger)
        try await conn.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH moved AS (DELETE FROM locations_default WHERE ts >= \(from) AND ts < \(to) RETURNING \(Self.fixColumns))
                    INSERT INTO \(name) (\(Self.fixColumns)) SELECT \(Self.fixColumns) FROM moved
                    """), logger: logger)
        try await conn.query(
            PostgresQuery(unsafeSQL: "ALTER TABLE locations ATTACH PARTITION \(name) FOR VALUES FROM (\(from)) TO (\(to))"),
            logger: logger)
    }

    /// Drops the partitions `names` (all older than `cutoff`) and the default partition's fixes
    /// older than `cutoff`, with their ids; each device whose every fix is older than the
    /// cutoff keeps its newest one (in the default partition). Returns how many fixes of the
    /// dropped partitions were kept (moved to the default partition).
    func drop(_ conn: PostgresConnection, _ names: [String], cutoff: Int64) async throws -> Int {
        var moved = 0
        let tolerance = FixClock.futureToleranceMillis
        let candidates =
            (names.map { "SELECT id, install_id, ts, received_at FROM \($0)" }
            + ["SELECT id, install_id, ts, received_at FROM locations_default WHERE ts < \(cutoff)"])
            .joined(separator: " UNION ALL ")
        // Each device's newest due fix (by the read API's last-fix rule), unless a newer one stays
        // (no due fix is newer than its device's newest due fix, so the due ones may still be attached).
        var kept: [UUID] = []
        for try await id in try await conn.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT c.id FROM (
                        SELECT DISTINCT ON (install_id) id, install_id, ts FROM (\(candidates)) x
                        WHERE ts <= received_at + \(tolerance) ORDER BY install_id, ts DESC, id DESC) c
                    WHERE NOT EXISTS (
                        SELECT 1 FROM locations l WHERE l.install_id = c.install_id AND l.ts <= l.received_at + \(tolerance)
                          AND (l.ts, l.id) > (c.ts, c.id))
                    """), logger: logger
        ).decode(UUID.self) {
            kept.append(id)
        }
        try await conn.query(
            """
            WITH d AS (DELETE FROM locations_default WHERE ts < \(cutoff) AND NOT (id = ANY(\(kept))) RETURNING id)
            DELETE FROM location_ids WHERE id IN (SELECT id FROM d)
            """, logger: logger)
        for name in names {
            try await conn.query(
                PostgresQuery(unsafeSQL: "DELETE FROM location_ids d USING \(name) p WHERE d.id = p.id"), logger: logger)
        }
        // Only now the exclusive lock on `locations` (held to the commit): the slow part is done.
        for name in names {
            try await conn.query(PostgresQuery(unsafeSQL: "ALTER TABLE locations DETACH PARTITION \(name)"), logger: logger)
            // Again, now that no upload can reach the table: an old fix that arrived between the
            // first delete and the detach claimed its id, which must not outlive its row. (Such an
            // upload can also deadlock with the detach; PostgreSQL breaks it and the upload's
            // retry stores the fix in the default partition.)
            try await conn.query(
                PostgresQuery(unsafeSQL: "DELETE FROM location_ids d USING \(name) p WHERE d.id = p.id"), logger: logger)
            // Back in through `locations` (the trigger claims the id again): the week has no
            // partition any more, so the row lands in the default partition.
            for try await _ in try await conn.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO locations (\(Self.fixColumns)) SELECT \(Self.fixColumns) FROM \(name) WHERE id = ANY($1)
                        RETURNING 1
                        """,
                    binds: {
                        var b = PostgresBindings()
                        b.append(kept)
                        return b
                    }()), logger: logger)
            {
                moved += 1
            }
            try await conn.query(PostgresQuery(unsafeSQL: "DROP TABLE \(name)"), logger: logger)
        }
        return moved
    }
}
