import BeekonWire
import Foundation
import GRDB

extension SQLiteLocationStore: LocateStore {
    package var locates: any LocateStore { self }

    static let locateColumns = """
        id, install_id, state, requested_by, created_at, expires_at, delivered_at, finished_at, reason, fix_id, fix, late_fix_id,
        pushed_at, push_error
        """

    package func insertLocate(_ r: LocateRequest, payload: String, limit: LocateRateLimit) async throws(StoreError) -> Int? {
        try await write { db in
            // The write transaction is the only writer: the read and the insert cannot interleave with another's.
            let previous = try Int64.fetchAll(
                db, sql: "SELECT created_at FROM locate_requests WHERE install_id = ? AND created_at >= ? ORDER BY created_at",
                arguments: [r.installId.wireString, r.createdAtMillis - limit.horizonMillis])
            let check = limit.check(previous: previous, nowMillis: r.createdAtMillis)
            guard check.allowed else { return check.retryAfterSeconds }
            try db.execute(
                sql: "INSERT INTO locate_requests (\(Self.locateColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: Self.arguments(r))
            try Self.appendLocateEvent(r, payload: payload, db: db)
            return nil
        }
    }

    package func locateRequest(id: UUID) async throws(StoreError) -> LocateRequest? {
        try await run { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.locateColumns) FROM locate_requests WHERE id = ?", arguments: [id.wireString])
                .flatMap(Self.locate)
        }
    }

    package func openLocateRequests(installId: UUID) async throws(StoreError) -> [LocateRequest] {
        try await run { db in
            // Every upload asks (the 2xx carries the open requests): a cached statement.
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(Self.locateColumns) FROM locate_requests
                        WHERE install_id = ? AND state IN (\(LocateRequest.State.openSQL)) ORDER BY created_at, id
                        """), arguments: [installId.wireString]
            ).compactMap(Self.locate)
        }
    }

    package func dueLocateRequests(nowMillis: Int64) async throws(StoreError) -> [LocateRequest] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.locateColumns) FROM locate_requests
                    WHERE state IN (\(LocateRequest.State.openSQL)) AND expires_at <= ? ORDER BY expires_at LIMIT 1000
                    """, arguments: [nowMillis]
            ).compactMap(Self.locate)
        }
    }

    package func updateLocate(_ r: LocateRequest, from: LocateRequest.State, payload: String?) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE locate_requests SET state = ?, delivered_at = ?, finished_at = ?, reason = ?, fix_id = ?, fix = ?,
                    late_fix_id = ?, pushed_at = ?, push_error = ? WHERE id = ? AND state = ?
                    """,
                arguments: [
                    r.state.rawValue, r.deliveredAtMillis, r.finishedAtMillis, r.reason, r.fixId?.wireString, r.fixJSON,
                    r.lateFixId?.wireString, r.pushedAtMillis, r.pushError, r.id.wireString, from.rawValue,
                ])
            guard db.changesCount == 1 else { return false }
            if let payload { try Self.appendLocateEvent(r, payload: payload, db: db) }
            return true
        }
    }

    static func appendLocateEvent(_ r: LocateRequest, payload: String, db: Database) throws {
        let at = r.finishedAtMillis ?? r.deliveredAtMillis ?? r.pushedAtMillis ?? r.createdAtMillis
        try appendEvents(
            [PendingEvent(kind: .locate, id: r.id, millis: at, payload: payload)], installId: r.installId.wireString,
            received: at, db: db)
    }

    static func arguments(_ r: LocateRequest) -> StatementArguments {
        [
            r.id.wireString, r.installId.wireString, r.state.rawValue, r.requestedBy, r.createdAtMillis, r.expiresAtMillis,
            r.deliveredAtMillis, r.finishedAtMillis, r.reason, r.fixId?.wireString, r.fixJSON, r.lateFixId?.wireString,
            r.pushedAtMillis, r.pushError,
        ]
    }

    static func locate(_ row: Row) -> LocateRequest? {
        guard let id = UUID(uuidString: row[0]), let install = UUID(uuidString: row[1]),
            let state = LocateRequest.State(rawValue: row[2])
        else { return nil }
        return LocateRequest(
            id: id, installId: install, state: state, requestedBy: row[3], createdAtMillis: row[4], expiresAtMillis: row[5],
            deliveredAtMillis: row[6], finishedAtMillis: row[7], reason: row[8],
            fixId: (row[9] as String?).flatMap { UUID(uuidString: $0) },
            fixJSON: row[10], lateFixId: (row[11] as String?).flatMap { UUID(uuidString: $0) }, pushedAtMillis: row[12],
            pushError: row[13])
    }
}

/// Locate requests, and the share flag that allows them (migration `v5-locate`).
enum SQLiteLocateSchema {
    static let v5 = """
        CREATE TABLE locate_requests (
            id TEXT PRIMARY KEY, install_id TEXT NOT NULL, state TEXT NOT NULL, requested_by TEXT NOT NULL,
            created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, delivered_at INTEGER, finished_at INTEGER,
            reason TEXT, fix_id TEXT, fix TEXT, late_fix_id TEXT);
        CREATE INDEX locate_requests_device ON locate_requests (install_id, created_at);
        CREATE INDEX locate_requests_open ON locate_requests (state, expires_at);
        ALTER TABLE shares ADD COLUMN locate INTEGER NOT NULL DEFAULT 0;
        """
}

/// Push tokens, one per install, and a locate request's push outcome (migration `v9-push`, issue 30).
enum SQLitePushSchema {
    static let v9 = """
        CREATE TABLE push_tokens (
            install_id TEXT PRIMARY KEY, provider TEXT NOT NULL, token TEXT NOT NULL, environment TEXT, topic TEXT,
            updated_at INTEGER NOT NULL);
        ALTER TABLE locate_requests ADD COLUMN pushed_at INTEGER;
        ALTER TABLE locate_requests ADD COLUMN push_error TEXT;
        """
}
