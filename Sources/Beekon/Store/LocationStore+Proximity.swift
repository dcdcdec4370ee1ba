import BeekonWire
import Foundation
import GRDB

/// Beacon proximity events (SPEC BY-5): stored durably like geofence events and carried in
/// the envelope's optional `proximity_events` array by the same batches.
extension LocationStore {
    /// Stores `events` in one transaction.
    func insertProximity(_ events: [ProximityRecord]) async throws(BeekonError) {
        try await write("storing proximity events") { db in
            for e in events {
                try db.execute(
                    sql: """
                        INSERT INTO proximity_event(id, region, beacon, major, minor, scanner, type, ts, distance)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        e.id.wireString, e.region, e.beacon.wireString, e.major, e.minor, e.scanner, e.transition.rawValue,
                        WireTimestamp(e.timestamp).millis, e.distance,
                    ])
            }
        }
    }

    /// Stored proximity events with `from ≤ timestamp ≤ to`, in time order.
    func proximityEvents(from: Date, to: Date) async throws(BeekonError) -> [ProximityRecord] {
        let lo = WireTimestamp(from).millis
        let hi = WireTimestamp(to).millis
        return try await read("reading proximity events") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM proximity_event WHERE ts BETWEEN ? AND ? ORDER BY ts, id", arguments: [lo, hi])
                .compactMap(Self.proximityRecord)
        }
    }

    /// Pending proximity events not held by an excluded batch (`freeRow`, as `nextBatch` builds it).
    static func pendingProximityCount(_ db: Database, freeRow: String, excluded: [String]) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM proximity_event WHERE upload_state = 0 \(freeRow)", arguments: StatementArguments(excluded))
            ?? 0
    }

    /// Puts up to `maxEventsPerBatch` pending proximity events into batch `batchID`.
    static func attachProximity(_ db: Database, batchID: String, freeRow: String, excluded: [String]) throws {
        try db.execute(
            sql: """
                UPDATE proximity_event SET batch_id = ? WHERE id IN (
                    SELECT id FROM proximity_event WHERE upload_state = 0 \(freeRow) ORDER BY ts, id LIMIT ?)
                """, arguments: StatementArguments([batchID]) + StatementArguments(excluded) + [maxEventsPerBatch])
    }

    /// The pending proximity events of batch `batchID`, in time order.
    static func batchProximity(_ db: Database, batchID: String) throws -> [ProximityRecord] {
        try Row.fetchAll(
            db, sql: "SELECT * FROM proximity_event WHERE batch_id = ? AND upload_state = 0 ORDER BY ts, id", arguments: [batchID]
        ).compactMap(proximityRecord)
    }

    /// Marks the proximity events of batch `batchID` uploaded (1) or set aside (2); returns how many.
    @discardableResult
    static func settleProximity(_ db: Database, batchID: String, state: Int) throws -> Int {
        try db.execute(
            sql: "UPDATE proximity_event SET upload_state = ?, batch_id = CASE WHEN ? = 1 THEN NULL ELSE batch_id END WHERE batch_id = ?",
            arguments: [state, state, batchID])
        return db.changesCount
    }

    static func proximityRecord(_ row: Row) -> ProximityRecord? {
        guard let id = UUID(wire: row["id"]), let beacon = UUID(wire: row["beacon"]),
            let transition = ProximityRecord.Transition(rawValue: row["type"])
        else { return nil }
        var record = ProximityRecord(
            region: row["region"], beacon: beacon, major: row["major"], minor: row["minor"], scanner: row["scanner"],
            transition: transition, timestamp: WireTimestamp(millis: row["ts"]).date, distance: row["distance"])
        record.id = id
        return record
    }
}
