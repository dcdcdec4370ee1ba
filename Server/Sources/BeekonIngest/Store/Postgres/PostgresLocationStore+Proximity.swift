import BeekonWire
import Foundation
import PostgresNIO

/// Beacon proximity events (SPEC BY-5) in PostgreSQL, deduped by id.
extension PostgresLocationStore {
    /// Schema version 4 ("v4-proximity").
    static let proximitySchema = [
        """
        CREATE TABLE proximity_events (
            id UUID PRIMARY KEY, install_id UUID NOT NULL, session_id UUID NOT NULL, batch_id UUID NOT NULL,
            region TEXT NOT NULL, beacon UUID NOT NULL, major BIGINT, minor BIGINT, scanner TEXT NOT NULL,
            type TEXT NOT NULL, ts BIGINT NOT NULL, distance DOUBLE PRECISION, received_at BIGINT NOT NULL)
        """,
        "CREATE INDEX proximity_events_device_time ON proximity_events (install_id, ts, id)",
    ]

    /// Stores the envelope's proximity events not stored yet, in one transaction, before the
    /// batch itself: a crash between the two leaves the batch unacknowledged, and its retry
    /// finds these ids stored (the batch id alone would have skipped them).
    func insertProximity(_ batch: IngestBatch) async throws(StoreError) {
        let e = batch.envelope
        guard !e.proximityEvents.isEmpty else { return }
        // Id order, so overlapping batches lock rows in the same order.
        let events = e.proximityEvents.sorted { Self.orderKey($0.id) < Self.orderKey($1.id) }
        try await transaction { conn in
            for p in events {
                try await conn.query(
                    """
                    INSERT INTO proximity_events (id, install_id, session_id, batch_id, region, beacon, major, minor, scanner,
                                                  type, ts, distance, received_at)
                    VALUES (\(p.id), \(e.device.installId), \(e.sessionId), \(e.batchId), \(p.region), \(p.uuid),
                            \(p.major.map(Int64.init)), \(p.minor.map(Int64.init)), \(p.scanner), \(p.type.rawValue),
                            \(p.timestamp.millis), \(p.distance), \(batch.receivedAt.millis))
                    ON CONFLICT (id) DO NOTHING
                    """, logger: self.logger)
            }
        }
    }

    package func proximityEvents(_ q: ProximityQuery) async throws(StoreError) -> [StoredProximityEvent] {
        try await perform { conn in
            var out: [StoredProximityEvent] = []
            let rows = try await conn.query(
                """
                SELECT id, install_id, session_id, batch_id, region, beacon, major, minor, scanner, type, ts, distance, received_at
                FROM proximity_events
                WHERE install_id = \(q.installId) AND ts >= \(q.from?.millis ?? Int64.min) AND ts < \(q.to?.millis ?? Int64.max)
                ORDER BY ts, id LIMIT \(q.limit)
                """, logger: self.logger)
            for try await row in rows {
                let (id, install, session, batchId, region, beacon, major, minor, scanner, type, ts, distance, received) =
                    try row.decode((UUID, UUID, UUID, UUID, String, UUID, Int64?, Int64?, String, String, Int64, Double?, Int64).self)
                out.append(
                    StoredProximityEvent(
                        event: WireProximityEvent(
                            id: id, region: region, uuid: beacon, major: major.map(Int.init), minor: minor.map(Int.init),
                            scanner: scanner, type: WireProximityEvent.Transition(rawValue: type) ?? .exit,
                            timestamp: WireTimestamp(millis: ts), distance: distance),
                        installId: install, sessionId: session, batchId: batchId, receivedAt: WireTimestamp(millis: received)))
            }
            return out
        }
    }
}
