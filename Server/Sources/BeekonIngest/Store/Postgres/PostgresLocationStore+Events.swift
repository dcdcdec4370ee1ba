import BeekonWire
import Foundation
import PostgresNIO

extension PostgresLocationStore {
    package func events(after: Int64, limit: Int) async throws(StoreError) -> [LiveEvent] {
        try await perform { conn in
            let rows = try await conn.query(
                """
                SELECT seq, kind, install_id, ts, payload FROM events WHERE seq > \(after) ORDER BY seq LIMIT \(limit)
                """, logger: self.logger
            ).decode((Int64, String, UUID, Int64, String).self)
            var out: [LiveEvent] = []
            out.reserveCapacity(limit)
            for try await (seq, kind, install, ts, payload) in rows {
                guard let kind = LiveEvent.Kind(rawValue: kind) else { continue }
                out.append(LiveEvent(seq: seq, kind: kind, installId: install, millis: ts, payload: payload))
            }
            return out
        }
    }

    package func eventMarks() async throws(StoreError) -> EventLogMarks {
        try await perform { conn in
            // Only committed rows count as the head: a sequence value drawn by a transaction
            // still in flight must not be promised to a client.
            let rows = try await conn.query(
                """
                SELECT (SELECT COALESCE(MAX(seq), 0) FROM events),
                       (SELECT COALESCE(MAX(value), 0) FROM server_marks WHERE name = 'events_pruned_through')
                """, logger: self.logger
            ).decode((Int64, Int64).self)
            var marks = EventLogMarks(head: 0, prunedThrough: 0)
            for try await (head, pruned) in rows { marks = EventLogMarks(head: max(head, pruned), prunedThrough: pruned) }
            return marks
        }
    }

    package func pruneEvents(receivedBefore cutoff: WireTimestamp) async throws(StoreError) {
        _ = try await transaction { conn in
            try await conn.query(
                """
                WITH d AS (DELETE FROM events WHERE seq <= (SELECT MAX(seq) FROM events WHERE received_at < \(cutoff.millis))
                           RETURNING seq)
                INSERT INTO server_marks (name, value) SELECT 'events_pruned_through', MAX(seq) FROM d HAVING MAX(seq) IS NOT NULL
                ON CONFLICT (name) DO UPDATE SET value = GREATEST(server_marks.value, excluded.value)
                """, logger: self.logger)
        }
    }

    /// Runs `onNotify` for every `NOTIFY beekon_events` (any instance's commit) until
    /// cancelled, reconnecting after a failure; `onNotify` also runs after each
    /// (re)subscription, so nothing committed while the listener was away is missed.
    func listenForEvents(_ onNotify: @escaping @Sendable () -> Void) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { conn in
                    try await conn.listen(on: "beekon_events") { notifications in
                        onNotify()
                        for try await _ in notifications { onNotify() }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("event listener lost its connection; retrying", metadata: ["error": "\(Self.describe(error))"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

extension PostgresLocationStore {
    package func publishDeviceStatus(installId: UUID, status: String, payload: String, atMillis: Int64) async throws(StoreError) -> Bool {
        try await transaction { conn in
            // The row lock serialises instances publishing the same device; the advisory lock
            // orders the sequence value with every other event (see PostgresIngestStatement).
            var changed = false
            for try await _ in try await conn.query(
                """
                INSERT INTO device_status (install_id, status, changed_at) VALUES (\(installId), \(status), \(atMillis))
                ON CONFLICT (install_id) DO UPDATE SET status = excluded.status, changed_at = excluded.changed_at
                WHERE device_status.status <> excluded.status RETURNING 1
                """, logger: self.logger)
            { changed = true }
            guard changed else { return false }
            try await conn.query("SELECT pg_advisory_xact_lock(74657002)", logger: self.logger)
            try await conn.query(
                """
                INSERT INTO events (kind, install_id, ts, received_at, payload)
                VALUES ('device', \(installId), \(atMillis), \(atMillis), \(payload))
                """, logger: self.logger)
            try await conn.query("SELECT pg_notify('beekon_events', '')", logger: self.logger)
            return true
        }
    }
}
