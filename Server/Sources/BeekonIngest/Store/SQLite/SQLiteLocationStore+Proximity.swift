import BeekonWire
import Foundation
import GRDB

/// Beacon proximity events (SPEC BY-5) in SQLite: inserted in the batch's transaction, deduped by id.
extension SQLiteLocationStore {
    static let proximitySchema = """
        CREATE TABLE proximity_events (
            id TEXT PRIMARY KEY, install_id TEXT NOT NULL, session_id TEXT NOT NULL, batch_id TEXT NOT NULL,
            region TEXT NOT NULL, beacon TEXT NOT NULL, major INTEGER, minor INTEGER, scanner TEXT NOT NULL,
            type TEXT NOT NULL, ts INTEGER NOT NULL, distance REAL, received_at INTEGER NOT NULL);
        CREATE INDEX proximity_events_device_time ON proximity_events (install_id, ts, id);
        """

    /// Stores the envelope's proximity events not stored yet (also for a replayed batch id:
    /// the ids decide); returns how many were new.
    @discardableResult
    static func insertProximity(_ batch: IngestBatch, into db: Database) throws -> Int {
        let e = batch.envelope
        guard !e.proximityEvents.isEmpty else { return 0 }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO proximity_events (id, install_id, session_id, batch_id, region, beacon, major, minor, scanner,
                                              type, ts, distance, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                """)
        var stored = 0
        for p in e.proximityEvents {
            try statement.execute(arguments: [
                p.id.wireString, e.device.installId.wireString, e.sessionId.wireString, e.batchId.wireString, p.region,
                p.uuid.wireString, p.major, p.minor, p.scanner, p.type.rawValue, p.timestamp.millis, p.distance,
                batch.receivedAt.millis,
            ])
            stored += db.changesCount
        }
        return stored
    }

    package func proximityEvents(_ q: ProximityQuery) async throws(StoreError) -> [StoredProximityEvent] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, install_id, session_id, batch_id, region, beacon, major, minor, scanner, type, ts, distance, received_at
                    FROM proximity_events WHERE install_id = ? AND ts >= ? AND ts < ? ORDER BY ts, id LIMIT ?
                    """,
                arguments: [q.installId.wireString, q.from?.millis ?? Int64.min, q.to?.millis ?? Int64.max, q.limit]
            ).map { row in
                StoredProximityEvent(
                    event: WireProximityEvent(
                        id: UUID(uuidString: row[0])!, region: row[4], uuid: UUID(uuidString: row[5])!, major: row[6], minor: row[7],
                        scanner: row[8], type: WireProximityEvent.Transition(rawValue: row[9]) ?? .exit,
                        timestamp: WireTimestamp(millis: row[10]), distance: row[11]),
                    installId: UUID(uuidString: row[1])!, sessionId: UUID(uuidString: row[2])!, batchId: UUID(uuidString: row[3])!,
                    receivedAt: WireTimestamp(millis: row[12]))
            }
        }
    }
}
