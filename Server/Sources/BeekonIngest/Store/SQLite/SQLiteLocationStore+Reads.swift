import BeekonWire
import Foundation
import GRDB

extension SQLiteLocationStore {
    /// The columns of every fix query (``StoredFixRow``, shared with PostgreSQL).
    static let fixColumns = StoredFixRow.select

    package func devices() async throws(StoreError) -> [DeviceSummary] {
        try await run { db in
            // SQLite returns the bare columns of the row holding MAX(received_at).
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT install_id, platform, sdk_version, model, MAX(received_at), expected_interval FROM batches GROUP BY install_id
                    ORDER BY install_id
                    """)
            return try rows.map { row in
                let install: String = row[0]
                let last = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT \(Self.fixColumns) FROM locations WHERE install_id = ? AND ts <= received_at + ?
                        ORDER BY ts DESC, id DESC LIMIT 1
                        """, arguments: [install, FixClock.futureToleranceMillis])
                let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM locations WHERE install_id = ?", arguments: [install]) ?? 0
                return DeviceSummary(
                    installId: UUID(uuidString: install)!, platform: row[1], sdkVersion: row[2], model: row[3],
                    lastFix: try last.map(Self.fix), lastReceivedAt: WireTimestamp(millis: row[4]), fixCount: count,
                    expectedIntervalSeconds: row[5])
            }
        }
    }

    package func deviceTimes(installId: UUID?) async throws(StoreError) -> [DeviceTimes] {
        try await run { db in
            let ids =
                try installId.map { [$0.wireString] }
                ?? String.fetchAll(db.cachedStatement(sql: "SELECT DISTINCT install_id FROM batches"))
            let head = try db.cachedStatement(
                sql: "SELECT received_at, expected_interval FROM batches WHERE install_id = ? ORDER BY received_at DESC LIMIT 1")
            // Time sanity (issue 28): a fix stamped past the tolerance after its arrival never
            // counts as the newest, so a wrong clock cannot keep a device live.
            let newest = try db.cachedStatement(
                sql: "SELECT MAX(ts) FROM locations WHERE install_id = ? AND ts <= received_at + \(FixClock.futureToleranceMillis)")
            return try ids.compactMap { id -> DeviceTimes? in
                guard let row = try Row.fetchOne(head, arguments: [id]), let install = UUID(uuidString: id) else { return nil }
                return DeviceTimes(
                    installId: install, lastFixMillis: try Int64.fetchOne(newest, arguments: [id]), lastContactMillis: row[0],
                    expectedSeconds: row[1])
            }
        }
    }

    package func holdsEverything(of envelope: WireEnvelope) async throws(StoreError) -> Bool {
        let install = envelope.device.installId.wireString
        let groups: [(String, [String])] = [
            ("locations", Array(Set(envelope.locations.map(\.id.wireString)))),
            ("geofence_events", Array(Set(envelope.geofenceEvents.map(\.id.wireString)))),
        ]
        return try await run { db in
            for (table, ids) in groups {
                for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
                    let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                    let found =
                        try Int.fetchOne(
                            db, sql: "SELECT COUNT(*) FROM \(table) WHERE install_id = ? AND id IN (\(marks))",
                            arguments: StatementArguments([install] + chunk)) ?? 0
                    if found < chunk.count { return false }
                }
            }
            return true
        }
    }

    package func sessions(installId: UUID, sinceMillis: Int64?, limit: Int?) async throws(StoreError) -> [SessionSummary] {
        let since = sinceMillis ?? .min
        return try await run { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM (
                        SELECT b.session_id AS session_id,
                               (SELECT MIN(ts) FROM locations l WHERE l.session_id = b.session_id AND l.ts >= :since) AS first_ms,
                               (SELECT MAX(ts) FROM locations l WHERE l.session_id = b.session_id AND l.ts >= :since) AS last_ms,
                               (SELECT COUNT(*) FROM locations l WHERE l.session_id = b.session_id AND l.ts >= :since) AS fixes,
                               (SELECT COUNT(*) FROM geofence_events g WHERE g.session_id = b.session_id AND g.ts >= :since) AS events
                        FROM (SELECT DISTINCT session_id FROM batches WHERE install_id = :install) b)
                    WHERE :all OR fixes > 0 OR events > 0
                    ORDER BY last_ms IS NULL, last_ms DESC, session_id DESC
                    LIMIT :limit
                    """,
                arguments: ["since": since, "install": installId.wireString, "all": sinceMillis == nil, "limit": limit ?? -1])
            // A share's window: a session with nothing in it is not listed at all (the WHERE).
            return try rows.map { row in
                SessionSummary(
                    sessionId: try Self.uuid(row, 0), installId: installId,
                    firstFixAt: (row[1] as Int64?).map(WireTimestamp.init(millis:)),
                    lastFixAt: (row[2] as Int64?).map(WireTimestamp.init(millis:)),
                    fixCount: row[3], eventCount: row[4])
            }.sortedNewestFirst()
        }
    }

    package func activity(installId: UUID, sinceMillis: Int64?, limit: Int) async throws(StoreError) -> [ActivityMinute] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT session_id, 0, ts / 60000 AS minute, COUNT(*), MIN(ts), MAX(ts),
                           MAX(CASE WHEN ts <= received_at + :tolerance THEN ts END)
                    FROM locations WHERE install_id = :install AND ts >= :since GROUP BY session_id, minute
                    UNION ALL
                    SELECT session_id, 1, ts / 60000 AS minute, COUNT(*), MIN(ts), MAX(ts), NULL
                    FROM geofence_events WHERE install_id = :install AND ts >= :since GROUP BY session_id, minute
                    ORDER BY minute DESC LIMIT :limit
                    """,
                arguments: [
                    "install": installId.wireString, "since": sinceMillis ?? Int64.min, "limit": limit,
                    "tolerance": FixClock.futureToleranceMillis,
                ]
            ).map { row in
                ActivityMinute(
                    sessionId: try Self.uuid(row, 0), isEvent: (row[1] as Int64) == 1, count: row[3], firstMillis: row[4],
                    lastMillis: row[5], newestSaneMillis: row[6])
            }
        }
    }

    package func track(_ q: TrackQuery) async throws(StoreError) -> FixPage {
        try await run { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.fixColumns) FROM locations WHERE session_id = ? AND ts >= ?
                    AND (ts > ? OR (ts = ? AND id > ?)) ORDER BY ts, id LIMIT ?
                    """,
                arguments: [
                    q.sessionId.wireString, q.sinceMillis ?? Int64.min, q.after?.millis ?? Int64.min, q.after?.millis ?? Int64.min,
                    q.after?.id.wireString ?? "", q.limit + 1,
                ]
            ).map(Self.fix)
            return FixPage.paged(rows, limit: q.limit)
        }
    }

    package func fixes(_ query: FixQuery) async throws(StoreError) -> FixPage {
        try await run { db in
            var sql = "SELECT \(Self.fixColumns) FROM locations WHERE install_id = ?"
            var args: [any DatabaseValueConvertible] = [query.installId.wireString]
            if let from = query.from {
                sql += " AND ts >= ?"
                args.append(from.millis)
            }
            if let to = query.to {
                sql += " AND ts < ?"
                args.append(to.millis)
            }
            if let after = query.after {
                sql += " AND (ts > ? OR (ts = ? AND id > ?))"
                args += [after.millis, after.millis, after.id.wireString]
            }
            sql += " ORDER BY ts, id LIMIT ?"
            args.append(query.limit + 1)
            let fixes = try Row.fetchAll(db, sql: sql, arguments: StatementArguments(args)).map(Self.fix)
            return FixPage.paged(fixes, limit: query.limit)
        }
    }

    /// Column `i` of `row` as a UUID; a stored id that is not one is a query error, never a crash.
    static func uuid(_ row: Row, _ i: Int) throws -> UUID { try row.uuid(i) }

    /// A row selected with ``fixColumns`` as a stored fix.
    static func fix(_ row: Row) throws -> StoredFix { try StoredFixRow.decode(row) }
}

extension FixPage {
    /// Builds a page from `limit + 1` fetched rows: the extra row only signals that more exist.
    static func paged(_ rows: [StoredFix], limit: Int) -> FixPage {
        guard rows.count > limit else { return FixPage(fixes: rows, next: nil) }
        let page = Array(rows.prefix(limit))
        let last = page[page.count - 1].location
        return FixPage(fixes: page, next: FixCursor(millis: last.timestamp.millis, id: last.id))
    }
}

extension Array where Element == SessionSummary {
    /// Newest session first (by last fix time; sessions without fixes last), ties by id.
    func sortedNewestFirst() -> [SessionSummary] {
        sorted { a, b in
            let ta = a.lastFixAt?.millis ?? .min
            let tb = b.lastFixAt?.millis ?? .min
            return ta != tb ? ta > tb : a.sessionId.wireString > b.sessionId.wireString
        }
    }
}
