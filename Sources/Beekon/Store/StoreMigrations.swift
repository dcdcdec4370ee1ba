import GRDB

/// Versioned schema migrations (ST-6). A shipped migration is frozen: change
/// the schema only by appending a new one.
enum StoreMigrations {
    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1-core") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
                    CREATE TABLE session (
                        id TEXT PRIMARY KEY NOT NULL,
                        started_at INTEGER NOT NULL,
                        stopped_at INTEGER,
                        stop_reason TEXT
                    ) WITHOUT ROWID;
                    CREATE TABLE location (
                        id TEXT NOT NULL UNIQUE,
                        session_id TEXT NOT NULL,
                        ts INTEGER NOT NULL,
                        latitude REAL NOT NULL,
                        longitude REAL NOT NULL,
                        accuracy REAL,
                        speed REAL,
                        bearing REAL,
                        altitude REAL,
                        trigger TEXT NOT NULL,
                        motion TEXT NOT NULL,
                        is_mock INTEGER NOT NULL,
                        activity TEXT,
                        quality TEXT
                    );
                    CREATE INDEX location_ts ON location(ts);
                    CREATE INDEX location_session_ts ON location(session_id, ts);
                    CREATE TABLE geofence_event (
                        id TEXT PRIMARY KEY NOT NULL,
                        geofence_id TEXT NOT NULL,
                        type TEXT NOT NULL,
                        ts INTEGER NOT NULL,
                        session_id TEXT
                    ) WITHOUT ROWID;
                    CREATE INDEX geofence_event_ts ON geofence_event(ts);
                    """)
        }
        m.registerMigration("v2-sync") { db in
            // upload_state: 0 pending, 1 acknowledged by the server, 2 rejected (set aside).
            try db.execute(
                sql: """
                    ALTER TABLE location ADD COLUMN upload_state INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE location ADD COLUMN batch_id TEXT;
                    CREATE INDEX location_pending ON location(session_id, ts) WHERE upload_state = 0;
                    ALTER TABLE geofence_event ADD COLUMN upload_state INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE geofence_event ADD COLUMN batch_id TEXT;
                    CREATE TABLE upload_batch (
                        id TEXT PRIMARY KEY NOT NULL,
                        session_id TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        extras TEXT NOT NULL,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        last_status INTEGER,
                        last_error TEXT
                    ) WITHOUT ROWID;
                    CREATE TABLE rejected_batch (
                        id TEXT PRIMARY KEY NOT NULL,
                        session_id TEXT NOT NULL,
                        rejected_at INTEGER NOT NULL,
                        status INTEGER NOT NULL,
                        locations INTEGER NOT NULL,
                        geofence_events INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        m.registerMigration("v3-geofences") { db in
            try db.execute(
                sql: """
                    CREATE TABLE geofence (
                        id TEXT PRIMARY KEY NOT NULL,
                        latitude REAL NOT NULL,
                        longitude REAL NOT NULL,
                        radius_meters REAL NOT NULL,
                        notify_on_entry INTEGER NOT NULL,
                        notify_on_exit INTEGER NOT NULL,
                        inside INTEGER NOT NULL DEFAULT 0
                    ) WITHOUT ROWID;
                    """)
        }
        m.registerMigration("v4-batch-index") { db in
            // Measured (P3): assembling and acknowledging a batch scanned the whole table.
            try db.execute(
                sql: """
                    CREATE INDEX location_batch ON location(batch_id) WHERE batch_id IS NOT NULL;
                    CREATE INDEX geofence_event_batch ON geofence_event(batch_id) WHERE batch_id IS NOT NULL;
                    """)
        }
        m.registerMigration("v5-proximity") { db in
            // Beacon proximity events (BY-5), queued for upload like geofence events (upload_state as in v2-sync).
            try db.execute(
                sql: """
                    CREATE TABLE proximity_event (
                        id TEXT PRIMARY KEY NOT NULL,
                        region TEXT NOT NULL,
                        beacon TEXT NOT NULL,
                        major INTEGER,
                        minor INTEGER,
                        scanner TEXT NOT NULL,
                        type TEXT NOT NULL,
                        ts INTEGER NOT NULL,
                        distance REAL,
                        upload_state INTEGER NOT NULL DEFAULT 0,
                        batch_id TEXT
                    ) WITHOUT ROWID;
                    CREATE INDEX proximity_event_ts ON proximity_event(ts);
                    CREATE INDEX proximity_event_batch ON proximity_event(batch_id) WHERE batch_id IS NOT NULL;
                    """)
        }
        m.registerMigration("v6-pipeline") { db in
            // The diagnostic log's ring buffer (BY-6): capped by DiagnosticLog on every flush.
            try db.execute(
                sql: """
                    CREATE TABLE diagnostic (
                        seq INTEGER PRIMARY KEY,
                        ts INTEGER NOT NULL,
                        level TEXT NOT NULL,
                        message TEXT NOT NULL,
                        metadata TEXT NOT NULL
                    );
                    CREATE INDEX diagnostic_ts ON diagnostic(ts);
                    """)
        }
        m.registerMigration("v7-locate") { db in
            // The locate request a fix answers (BY-2), uploaded as locate_request_id.
            try db.execute(sql: "ALTER TABLE location ADD COLUMN locate_request_id TEXT")
        }
        m.registerMigration("v8-batch-range") { db in
            // A batch's fixes are a row range of its session (first_row…last_row, pending
            // rows only) instead of its id written into each row, so assembling a batch writes
            // one row, not 1,000 rows and two indexes. Batches assembled before keep their tagged
            // rows (rows_tagged = 1: members are the fixes carrying the id) and get their span, so
            // no new range overlaps them. Pending fixes are picked in rowid order (the pending
            // index on session_id ends with the rowid). A stale tag (no open batch) is cleared.
            try db.execute(
                sql: """
                    ALTER TABLE upload_batch ADD COLUMN first_row INTEGER;
                    ALTER TABLE upload_batch ADD COLUMN last_row INTEGER;
                    ALTER TABLE upload_batch ADD COLUMN rows_tagged INTEGER NOT NULL DEFAULT 0;
                    UPDATE location SET batch_id = NULL WHERE batch_id IS NOT NULL
                        AND (upload_state <> 0 OR batch_id NOT IN (SELECT id FROM upload_batch));
                    UPDATE upload_batch SET rows_tagged = 1,
                        first_row = (SELECT min(rowid) FROM location WHERE batch_id = upload_batch.id),
                        last_row = (SELECT max(rowid) FROM location WHERE batch_id = upload_batch.id);
                    DROP INDEX location_pending;
                    CREATE INDEX location_pending_rows ON location(session_id) WHERE upload_state = 0;
                    """)
        }
        return m
    }
}
