import BeekonWire
import Foundation
import PostgresNIO

extension PostgresLocationStore: LocateStore {
    package var locates: any LocateStore { self }

    static let locateColumns = """
        id, install_id, state, requested_by, created_at, expires_at, delivered_at, finished_at, reason, fix_id, fix, late_fix_id,
        pushed_at, push_error
        """

    package func insertLocate(_ r: LocateRequest, payload: String, limit: LocateRateLimit) async throws(StoreError) -> Int? {
        try await transaction { conn in
            // One device's creations are serialised (across instances) until this transaction ends.
            try await conn.query("SELECT pg_advisory_xact_lock(74657003, hashtext(\(r.installId.wireString)))", logger: self.logger)
            var previous: [Int64] = []
            for try await t in try await conn.query(
                """
                SELECT created_at FROM locate_requests
                WHERE install_id = \(r.installId) AND created_at >= \(r.createdAtMillis - limit.horizonMillis) ORDER BY created_at
                """, logger: self.logger
            ).decode(Int64.self) { previous.append(t) }
            let check = limit.check(previous: previous, nowMillis: r.createdAtMillis)
            guard check.allowed else { return check.retryAfterSeconds }
            try await conn.query(
                """
                INSERT INTO locate_requests (\(unescaped: Self.locateColumns))
                VALUES (\(r.id), \(r.installId), \(r.state.rawValue), \(r.requestedBy), \(r.createdAtMillis), \(r.expiresAtMillis),
                        \(r.deliveredAtMillis), \(r.finishedAtMillis), \(r.reason), \(r.fixId), \(r.fixJSON), \(r.lateFixId),
                        \(r.pushedAtMillis), \(r.pushError))
                """, logger: self.logger)
            try await self.appendLocateEvent(r, payload: payload, conn)
            return nil
        }
    }

    package func locateRequest(id: UUID) async throws(StoreError) -> LocateRequest? {
        try await perform { conn in
            try await self.fetchLocates(conn, "SELECT \(unescaped: Self.locateColumns) FROM locate_requests WHERE id = \(id)").first
        }
    }

    package func openLocateRequests(installId: UUID) async throws(StoreError) -> [LocateRequest] {
        try await perform { conn in
            try await self.fetchLocates(
                conn,
                """
                SELECT \(unescaped: Self.locateColumns) FROM locate_requests
                WHERE install_id = \(installId) AND state IN (\(unescaped: LocateRequest.State.openSQL)) ORDER BY created_at, id
                """)
        }
    }

    package func dueLocateRequests(nowMillis: Int64) async throws(StoreError) -> [LocateRequest] {
        try await perform { conn in
            try await self.fetchLocates(
                conn,
                """
                SELECT \(unescaped: Self.locateColumns) FROM locate_requests
                WHERE state IN (\(unescaped: LocateRequest.State.openSQL)) AND expires_at <= \(nowMillis) ORDER BY expires_at LIMIT 1000
                """)
        }
    }

    package func updateLocate(_ r: LocateRequest, from: LocateRequest.State, payload: String?) async throws(StoreError) -> Bool {
        try await transaction { conn in
            var changed = false
            for try await _ in try await conn.query(
                """
                UPDATE locate_requests SET state = \(r.state.rawValue), delivered_at = \(r.deliveredAtMillis),
                    finished_at = \(r.finishedAtMillis), reason = \(r.reason), fix_id = \(r.fixId), fix = \(r.fixJSON),
                    late_fix_id = \(r.lateFixId), pushed_at = \(r.pushedAtMillis), push_error = \(r.pushError)
                WHERE id = \(r.id) AND state = \(from.rawValue) RETURNING 1
                """, logger: self.logger)
            { changed = true }
            guard changed else { return false }
            if let payload { try await self.appendLocateEvent(r, payload: payload, conn) }
            return true
        }
    }

    /// Appends a `locate` event under the event-order lock (see `PostgresIngestStatement`).
    private func appendLocateEvent(_ r: LocateRequest, payload: String, _ conn: PostgresConnection) async throws {
        let at = r.finishedAtMillis ?? r.deliveredAtMillis ?? r.pushedAtMillis ?? r.createdAtMillis
        try await conn.query("SELECT pg_advisory_xact_lock(74657002)", logger: logger)
        try await conn.query(
            """
            INSERT INTO events (kind, install_id, ts, received_at, payload)
            VALUES ('locate', \(r.installId), \(at), \(at), \(payload))
            """, logger: logger)
        try await conn.query("SELECT pg_notify('beekon_events', '')", logger: logger)
    }

    func fetchLocates(_ conn: PostgresConnection, _ query: PostgresQuery) async throws -> [LocateRequest] {
        let rows = try await conn.query(query, logger: logger).decode(
            (UUID, UUID, String, String, Int64, Int64, Int64?, Int64?, String?, UUID?, String?, UUID?, Int64?, String?).self)
        var out: [LocateRequest] = []
        for try await (id, install, state, by, created, expires, delivered, finished, reason, fixId, fix, late, pushed, pushError) in rows {
            guard let state = LocateRequest.State(rawValue: state) else { continue }
            out.append(
                LocateRequest(
                    id: id, installId: install, state: state, requestedBy: by, createdAtMillis: created, expiresAtMillis: expires,
                    deliveredAtMillis: delivered, finishedAtMillis: finished, reason: reason, fixId: fixId, fixJSON: fix,
                    lateFixId: late, pushedAtMillis: pushed, pushError: pushError))
        }
        return out
    }
}

/// Locate requests, and the share flag that allows them (schema version 5, "v5-locate").
enum PostgresLocateSchema {
    static let v5 = [
        """
        CREATE TABLE locate_requests (
            id UUID PRIMARY KEY, install_id UUID NOT NULL, state TEXT NOT NULL, requested_by TEXT NOT NULL,
            created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, delivered_at BIGINT, finished_at BIGINT,
            reason TEXT, fix_id UUID, fix TEXT, late_fix_id UUID)
        """,
        "CREATE INDEX locate_requests_device ON locate_requests (install_id, created_at)",
        "CREATE INDEX locate_requests_open ON locate_requests (state, expires_at)",
        "ALTER TABLE shares ADD COLUMN locate BOOLEAN NOT NULL DEFAULT FALSE",
    ]
}

/// Push tokens, one per install, and a locate request's push outcome (schema version 9, "v9-push", issue 30).
enum PostgresPushSchema {
    static let v9 = [
        """
        CREATE TABLE push_tokens (
            install_id UUID PRIMARY KEY, provider TEXT NOT NULL, token TEXT NOT NULL, environment TEXT, topic TEXT,
            updated_at BIGINT NOT NULL)
        """,
        "ALTER TABLE locate_requests ADD COLUMN pushed_at BIGINT",
        "ALTER TABLE locate_requests ADD COLUMN push_error TEXT",
    ]
}
