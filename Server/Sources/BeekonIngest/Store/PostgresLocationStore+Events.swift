import BeekonWire
import Foundation
import PostgresNIO

extension PostgresLocationStore {
    public func events(after: Int64, limit: Int) async throws(StoreError) -> [LiveEvent] {
        try await perform { conn in
            let rows = try await conn.query("""
                SELECT seq, kind, install_id, ts, payload FROM events WHERE seq > \(after) ORDER BY seq LIMIT \(limit)
                """, logger: self.logger).decode((Int64, String, UUID, Int64, String).self)
            var out: [LiveEvent] = []
            out.reserveCapacity(limit)
            for try await (seq, kind, install, ts, payload) in rows {
                guard let kind = LiveEvent.Kind(rawValue: kind) else { continue }
                out.append(LiveEvent(seq: seq, kind: kind, installId: install, millis: ts, payload: payload))
            }
            return out
        }
    }

    public func eventMarks() async throws(StoreError) -> EventLogMarks {
        try await perform { conn in
            // Only committed rows count as the head: a sequence value drawn by a transaction
            // still in flight must not be promised to a client.
            let rows = try await conn.query("""
                SELECT (SELECT COALESCE(MAX(seq), 0) FROM events),
                       (SELECT COALESCE(MAX(value), 0) FROM server_marks WHERE name = 'events_pruned_through')
                """, logger: self.logger).decode((Int64, Int64).self)
            var marks = EventLogMarks(head: 0, prunedThrough: 0)
            for try await (head, pruned) in rows { marks = EventLogMarks(head: max(head, pruned), prunedThrough: pruned) }
            return marks
        }
    }

    public func pruneEvents(receivedBefore cutoff: WireTimestamp) async throws(StoreError) {
        _ = try await transaction { conn in
            try await conn.query("""
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
