import BeekonWire
import Foundation
import PostgresNIO

extension PostgresLocationStore {
    /// The columns of every fix query (``StoredFixRow``, shared with SQLite).
    static let fixColumns = StoredFixRow.select

    package func devices() async throws(StoreError) -> [DeviceSummary] {
        try await perform { conn in
            var devices: [DeviceSummary] = []
            let rows = try await conn.query(
                """
                SELECT DISTINCT ON (install_id) install_id, platform, sdk_version, model, received_at, expected_interval
                FROM batches ORDER BY install_id, received_at DESC
                """, logger: self.logger
            ).decode((UUID, String, String, String?, Int64, Int32?).self)
            var heads: [(UUID, String, String, String?, Int64, Int32?)] = []
            for try await row in rows { heads.append(row) }
            for (install, platform, sdk, model, received, interval) in heads {
                let last = try await self.fetchFixes(conn, Self.lastFixQuery(install)).first
                var count = 0
                for try await c in try await conn.query(
                    "SELECT count(*) FROM locations WHERE install_id = \(install)",
                    logger: self.logger
                ).decode(Int64.self) { count = Int(c) }
                devices.append(
                    DeviceSummary(
                        installId: install, platform: platform, sdkVersion: sdk, model: model,
                        lastFix: last, lastReceivedAt: WireTimestamp(millis: received), fixCount: count,
                        expectedIntervalSeconds: interval.map(Int.init)))
            }
            return devices
        }
    }

    package func deviceTimes(installId: UUID?) async throws(StoreError) -> [DeviceTimes] {
        try await perform { conn in
            let query: PostgresQuery
            if let installId {
                query = """
                    SELECT b.install_id, b.received_at, b.expected_interval,
                           (SELECT max(ts) FROM locations l WHERE l.install_id = b.install_id AND l.ts <= l.received_at + \(FixClock.futureToleranceMillis))
                    FROM (SELECT install_id, received_at, expected_interval FROM batches WHERE install_id = \(installId)
                          ORDER BY received_at DESC LIMIT 1) b
                    """
            } else {
                query = """
                    SELECT b.install_id, b.received_at, b.expected_interval,
                           (SELECT max(ts) FROM locations l WHERE l.install_id = b.install_id AND l.ts <= l.received_at + \(FixClock.futureToleranceMillis))
                    FROM (SELECT DISTINCT ON (install_id) install_id, received_at, expected_interval FROM batches
                          ORDER BY install_id, received_at DESC) b
                    """
            }
            var out: [DeviceTimes] = []
            for try await (install, received, interval, fix) in try await conn.query(query, logger: self.logger).decode(
                (UUID, Int64, Int32?, Int64?).self)
            {
                out.append(
                    DeviceTimes(
                        installId: install, lastFixMillis: fix, lastContactMillis: received, expectedSeconds: interval.map(Int.init)))
            }
            return out
        }
    }

    package func holdsEverything(of envelope: WireEnvelope) async throws(StoreError) -> Bool {
        let install = envelope.device.installId
        let locations = envelope.locations.map(\.id)
        let events = envelope.geofenceEvents.map(\.id)
        return try await perform { conn in
            var found = (0, 0)
            for try await row in try await conn.query(
                """
                SELECT (SELECT count(*) FROM location_ids WHERE install_id = \(install) AND id = ANY(\(locations))),
                       (SELECT count(*) FROM geofence_events WHERE install_id = \(install) AND id = ANY(\(events)))
                """, logger: self.logger
            ).decode((Int64, Int64).self) { found = (Int(row.0), Int(row.1)) }
            return found.0 == Set(locations).count && found.1 == Set(events).count
        }
    }

    package func sessions(installId: UUID, sinceMillis: Int64?, limit: Int?) async throws(StoreError) -> [SessionSummary] {
        let since = sinceMillis ?? .min
        return try await perform { conn in
            let rows = try await conn.query(
                """
                SELECT session_id, first_ms, last_ms, fixes, events FROM (
                    SELECT b.session_id,
                           (SELECT MIN(ts) FROM locations l WHERE l.session_id = b.session_id AND l.ts >= \(since)) AS first_ms,
                           (SELECT MAX(ts) FROM locations l WHERE l.session_id = b.session_id AND l.ts >= \(since)) AS last_ms,
                           (SELECT count(*) FROM locations l WHERE l.session_id = b.session_id AND l.ts >= \(since)) AS fixes,
                           (SELECT count(*) FROM geofence_events g WHERE g.session_id = b.session_id AND g.ts >= \(since)) AS events
                    FROM (SELECT DISTINCT session_id FROM batches WHERE install_id = \(installId)) b) s
                WHERE \(sinceMillis == nil) OR fixes > 0 OR events > 0
                ORDER BY last_ms IS NULL, last_ms DESC, session_id::text DESC
                LIMIT \(Int64(limit ?? Int(Int32.max)))
                """, logger: self.logger
            ).decode((UUID, Int64?, Int64?, Int64, Int64).self)
            var out: [SessionSummary] = []
            for try await (session, first, last, fixes, events) in rows {
                // A share's window: a session with nothing in it is not listed at all.
                if sinceMillis != nil, fixes == 0, events == 0 { continue }
                out.append(
                    SessionSummary(
                        sessionId: session, installId: installId, firstFixAt: first.map(WireTimestamp.init(millis:)),
                        lastFixAt: last.map(WireTimestamp.init(millis:)), fixCount: Int(fixes), eventCount: Int(events)))
            }
            return out.sortedNewestFirst()
        }
    }

    package func activity(installId: UUID, sinceMillis: Int64?, limit: Int) async throws(StoreError) -> [ActivityMinute] {
        let since = sinceMillis ?? .min
        return try await perform { conn in
            let rows = try await conn.query(
                """
                SELECT session_id, 0, ts / 60000 AS minute, count(*), MIN(ts), MAX(ts),
                       MAX(CASE WHEN ts <= received_at + \(FixClock.futureToleranceMillis) THEN ts END)
                FROM locations WHERE install_id = \(installId) AND ts >= \(since) GROUP BY session_id, minute
                UNION ALL
                SELECT session_id, 1, ts / 60000 AS minute, count(*), MIN(ts), MAX(ts), NULL::BIGINT
                FROM geofence_events WHERE install_id = \(installId) AND ts >= \(since) GROUP BY session_id, minute
                ORDER BY minute DESC LIMIT \(Int64(limit))
                """, logger: self.logger
            ).decode((UUID, Int32, Int64, Int64, Int64, Int64, Int64?).self)
            var out: [ActivityMinute] = []
            for try await (session, kind, _, count, first, last, sane) in rows {
                out.append(
                    ActivityMinute(
                        sessionId: session, isEvent: kind == 1, count: Int(count), firstMillis: first, lastMillis: last,
                        newestSaneMillis: sane))
            }
            return out
        }
    }

    package func track(_ q: TrackQuery) async throws(StoreError) -> FixPage {
        try await perform { conn in
            FixPage.paged(try await self.fetchFixes(conn, Self.trackQuery(q)), limit: q.limit)
        }
    }

    package func fixes(_ q: FixQuery) async throws(StoreError) -> FixPage {
        try await perform { conn in
            FixPage.paged(try await self.fetchFixes(conn, Self.fixesQuery(q)), limit: q.limit)
        }
    }

    /// A device's newest fix (the read API's `last_fix`: a fix dated beyond the clock tolerance
    /// after its receipt does not count). The partition test EXPLAINs these hot queries.
    static func lastFixQuery(_ install: UUID) -> PostgresQuery {
        """
        SELECT \(unescaped: fixColumns) FROM locations
        WHERE install_id = \(install) AND ts <= received_at + \(FixClock.futureToleranceMillis)
        ORDER BY ts DESC, id DESC LIMIT 1
        """
    }

    /// One page of a session's track.
    static func trackQuery(_ q: TrackQuery) -> PostgresQuery {
        """
        SELECT \(unescaped: fixColumns) FROM locations
        WHERE session_id = \(q.sessionId) AND ts >= \(q.sinceMillis ?? Int64.min)
          AND (ts, id) > (\(q.after?.millis ?? Int64.min), \(q.after?.id ?? UUID(uuid: UUID_NULL)))
        ORDER BY ts, id LIMIT \(q.limit + 1)
        """
    }

    /// One page of a device's fixes in a time window. Open bounds are the extreme values (not
    /// NULL), so the planner uses (install_id, ts, id) and prunes to the weeks of the window.
    static func fixesQuery(_ q: FixQuery) -> PostgresQuery {
        """
        SELECT \(unescaped: fixColumns) FROM locations
        WHERE install_id = \(q.installId)
          AND ts >= \(q.from?.millis ?? Int64.min) AND ts < \(q.to?.millis ?? Int64.max)
          AND (ts, id) > (\(q.after?.millis ?? Int64.min), \(q.after?.id ?? UUID(uuid: UUID_NULL)))
        ORDER BY ts, id LIMIT \(q.limit + 1)
        """
    }

    func fetchFixes(_ conn: PostgresConnection, _ query: PostgresQuery) async throws -> [StoredFix] {
        var out: [StoredFix] = []
        for try await row in try await conn.query(query, logger: logger) {
            out.append(try StoredFixRow.decode(row.makeRandomAccess()))
        }
        return out
    }
}

private let UUID_NULL: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
