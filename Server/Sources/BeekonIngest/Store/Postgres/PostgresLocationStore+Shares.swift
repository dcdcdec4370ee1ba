import Foundation
import PostgresNIO

extension PostgresLocationStore {
    package func createShare(_ share: Share, tokenHash: String) async throws(StoreError) {
        try await perform { conn in
            let scope = try ShareRow.scopeText(share.scope)
            try await conn.query(
                """
                INSERT INTO shares (id, token_hash, label, devices, created_at, expires_at, scope)
                VALUES (\(share.id), \(tokenHash), \(share.label), \(ShareRow.devicesText(share.devices)), \(share.createdAtMillis),
                        \(share.expiresAtMillis), \(scope))
                """, logger: self.logger)
        }
    }

    package func shares() async throws(StoreError) -> [Share] {
        try await perform { conn in
            try await self.fetchShares(conn, "SELECT \(unescaped: Self.shareColumns) FROM shares ORDER BY created_at DESC, id")
        }
    }

    package func share(tokenHash: String) async throws(StoreError) -> Share? {
        try await perform { conn in
            try await self.fetchShares(conn, "SELECT \(unescaped: Self.shareColumns) FROM shares WHERE token_hash = \(tokenHash)").first
        }
    }

    package func revokeShare(id: String, atMillis: Int64) async throws(StoreError) -> Bool {
        try await perform { conn in
            var n = 0
            for try await _ in try await conn.query(
                """
                UPDATE shares SET revoked_at = \(atMillis) WHERE id = \(id) AND revoked_at IS NULL RETURNING id
                """, logger: self.logger)
            { n += 1 }
            return n == 1
        }
    }

    package func recordShareAccess(_ a: ShareAccess, retention: ShareAccessRetention) async throws(StoreError) {
        let cutoff = a.atMillis - Int64(retention.maxAgeSeconds) * 1000
        let keep = Int64(retention.maxRows)
        let batch = ShareAccessRetention.pruneBatch
        try await perform { conn in
            // One statement: insert, then (ids only grow) delete the rows at or below (new id - maxRows)
            // and the oldest rows past the age bound.
            try await conn.query(
                """
                WITH added AS (
                    INSERT INTO share_access (share_id, at, what, path, outcome)
                    VALUES (\(a.shareId), \(a.atMillis), \(a.what), \(a.path), \(a.outcome)) RETURNING id),
                oldest AS (SELECT id, at FROM share_access ORDER BY id LIMIT \(batch))
                DELETE FROM share_access WHERE id <= (SELECT id FROM added) - \(keep)
                    OR id IN (SELECT id FROM oldest WHERE at < \(cutoff))
                """, logger: self.logger)
        }
    }

    package func shareAccess(shareId: String?, limit: Int) async throws(StoreError) -> [ShareAccess] {
        try await perform { conn in
            let rows = try await conn.query(
                """
                SELECT share_id, at, what, path, outcome FROM share_access
                WHERE \(shareId)::text IS NULL OR share_id = \(shareId) ORDER BY id DESC LIMIT \(limit)
                """, logger: self.logger
            ).decode((String, Int64, String, String, String).self)
            var out: [ShareAccess] = []
            for try await (s, at, what, path, outcome) in rows {
                out.append(ShareAccess(shareId: s, atMillis: at, what: what, path: path, outcome: outcome))
            }
            return out
        }
    }

    static let shareColumns = "id, label, devices, created_at, expires_at, revoked_at, scope"

    /// Version 11, "v11-share-scope": a share's scope is one JSON column (`ShareScope`'s keys),
    /// copied from the columns it replaces; adding a scope key changes no schema.
    static let shareScopeSchema = [
        "ALTER TABLE shares ADD COLUMN scope TEXT NOT NULL DEFAULT '{}'",
        """
        UPDATE shares SET scope = json_build_object(
            'history_seconds', history_seconds, 'live', live, 'precision_m', precision_m, 'locate', locate)::text
        """,
        "ALTER TABLE shares DROP COLUMN history_seconds, DROP COLUMN live, DROP COLUMN precision_m, DROP COLUMN locate",
    ]

    func fetchShares(_ conn: PostgresConnection, _ query: PostgresQuery) async throws -> [Share] {
        var out: [Share] = []
        let rows = try await conn.query(query, logger: logger)
            .decode((String, String?, String?, Int64, Int64?, Int64?, String).self)
        for try await (id, label, devices, created, expires, revoked, scope) in rows {
            out.append(
                Share(
                    id: id, label: label, devices: ShareRow.devices(devices), createdAtMillis: created,
                    expiresAtMillis: expires, scope: try ShareRow.scope(scope), revokedAtMillis: revoked))
        }
        return out
    }
}
