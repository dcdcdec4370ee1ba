import BeekonWire
import Foundation
import GRDB

extension SQLiteLocationStore {
    /// Appends events inside the ingest transaction: SQLite has one writer, so rowid
    /// order is commit order and a reader never sees a later sequence before an earlier one.
    static func appendEvents(_ events: [PendingEvent], installId: String, received: Int64, db: Database) throws {
        try appendEvents(events.map { LiveRow(event: $0, installId: installId, received: received) }, db: db)
    }

    /// Appends events of several devices in the given order (multi-row inserts: a row's
    /// sequence follows its position).
    static func appendEvents(_ rows: [LiveRow], db: Database) throws {
        try insertRows(
            db, "INSERT INTO events (kind, install_id, ts, received_at, payload)",
            rows.map {
                [
                    $0.event.kind.rawValue.databaseValue, $0.installId.databaseValue, $0.event.millis.databaseValue,
                    $0.received.databaseValue, $0.event.payload.databaseValue,
                ]
            }, "")
    }

    /// An event with the columns the log keeps beside it.
    struct LiveRow {
        var event: PendingEvent
        var installId: String
        var received: Int64
    }

    package func events(after: Int64, limit: Int) async throws(StoreError) -> [LiveEvent] {
        // Read after every commit: decoded straight off the cursor (no copy of each row first),
        // and the install id parsed by BeekonWire rather than Foundation's `sscanf`-based parser.
        try await runOne { db in
            let rows = try Row.fetchCursor(
                db.cachedStatement(sql: "SELECT seq, kind, install_id, ts, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?"),
                arguments: [after, limit])
            var events: [LiveEvent] = []
            while let row = try rows.next() {
                guard let kind = LiveEvent.Kind(rawValue: row[1]), let install = UUID(wire: row[2]) else { continue }
                events.append(LiveEvent(seq: row[0], kind: kind, installId: install, millis: row[3], payload: row[4]))
            }
            return events
        }
    }

    package func eventMarks() async throws(StoreError) -> EventLogMarks {
        try await run { db in
            let head = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'events'") ?? 0
            let pruned = try String.fetchOne(db, sql: "SELECT value FROM server_keys WHERE name = 'events_pruned_through'")
            return EventLogMarks(head: head, prunedThrough: pruned.flatMap { Int64($0) } ?? 0)
        }
    }

    package func pruneEvents(receivedBefore cutoff: WireTimestamp) async throws(StoreError) {
        try await write { db in
            guard
                let top = try Int64.fetchOne(
                    db, sql: "SELECT MAX(seq) FROM events WHERE received_at < ?",
                    arguments: [cutoff.millis])
            else { return }
            try db.execute(sql: "DELETE FROM events WHERE seq <= ?", arguments: [top])
            try db.execute(
                sql: """
                    INSERT INTO server_keys (name, value) VALUES ('events_pruned_through', ?)
                    ON CONFLICT (name) DO UPDATE SET value = excluded.value
                    """, arguments: [String(top)])
        }
    }
}

extension SQLiteLocationStore {
    package func publishDeviceStatus(installId: UUID, status: String, payload: String, atMillis: Int64) async throws(StoreError) -> Bool {
        try await write { db in
            let id = installId.wireString
            let current = try String.fetchOne(db, sql: "SELECT status FROM device_status WHERE install_id = ?", arguments: [id])
            guard current != status else { return false }
            try db.execute(
                sql: """
                    INSERT INTO device_status (install_id, status, changed_at) VALUES (?, ?, ?)
                    ON CONFLICT (install_id) DO UPDATE SET status = excluded.status, changed_at = excluded.changed_at
                    """, arguments: [id, status, atMillis])
            try Self.appendEvents(
                [PendingEvent(kind: .device, id: installId, millis: atMillis, payload: payload)],
                installId: id, received: atMillis, db: db)
            return true
        }
    }
}
