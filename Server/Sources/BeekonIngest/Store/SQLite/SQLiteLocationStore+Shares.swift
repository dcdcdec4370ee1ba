import Foundation
import GRDB

extension SQLiteLocationStore {
    static let shareColumns = "id, label, devices, created_at, expires_at, revoked_at, scope"

    package func createShare(_ share: Share, tokenHash: String) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO shares (id, token_hash, label, devices, created_at, expires_at, scope)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    share.id, tokenHash, share.label, ShareRow.devicesText(share.devices), share.createdAtMillis,
                    share.expiresAtMillis, try ShareRow.scopeText(share.scope),
                ])
        }
    }

    package func shares() async throws(StoreError) -> [Share] {
        try await run { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.shareColumns) FROM shares ORDER BY created_at DESC, id").map(Self.share)
        }
    }

    package func share(tokenHash: String) async throws(StoreError) -> Share? {
        try await run { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.shareColumns) FROM shares WHERE token_hash = ?", arguments: [tokenHash]).map(
                Self.share)
        }
    }

    package func revokeShare(id: String, atMillis: Int64) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE shares SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", arguments: [atMillis, id])
            return db.changesCount == 1
        }
    }

    package func recordShareAccess(_ a: ShareAccess, retention: ShareAccessRetention) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO share_access (share_id, at, what, path, outcome) VALUES (?, ?, ?, ?, ?)",
                arguments: [a.shareId, a.atMillis, a.what, a.path, a.outcome])
            // Ids only grow: everything at or below (new id - maxRows) is beyond the cap (an index range).
            try db.execute(
                sql: "DELETE FROM share_access WHERE id <= ?", arguments: [db.lastInsertedRowID - Int64(retention.maxRows)])
            try db.execute(
                sql: """
                    DELETE FROM share_access WHERE id IN (SELECT id FROM share_access ORDER BY id LIMIT ?) AND at < ?
                    """, arguments: [ShareAccessRetention.pruneBatch, a.atMillis - Int64(retention.maxAgeSeconds) * 1000])
        }
    }

    package func shareAccess(shareId: String?, limit: Int) async throws(StoreError) -> [ShareAccess] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT share_id, at, what, path, outcome FROM share_access WHERE ? IS NULL OR share_id = ? ORDER BY id DESC LIMIT ?
                    """, arguments: [shareId, shareId, limit]
            ).map { ShareAccess(shareId: $0[0], atMillis: $0[1], what: $0[2], path: $0[3], outcome: $0[4]) }
        }
    }

    static func share(_ row: Row) throws -> Share {
        Share(
            id: row[0], label: row[1], devices: ShareRow.devices(row[2]), createdAtMillis: row[3], expiresAtMillis: row[4],
            scope: try ShareRow.scope(row[6]), revokedAtMillis: row[5])
    }

    /// v10: a share's scope is one JSON column (`ShareScope`'s keys), copied from the columns it
    /// replaces; adding a scope key changes no schema.
    static let shareScopeSchema = """
        ALTER TABLE shares ADD COLUMN scope TEXT NOT NULL DEFAULT '{}';
        UPDATE shares SET scope = json_object(
            'history_seconds', history_seconds, 'live', json(CASE WHEN live THEN 'true' ELSE 'false' END),
            'precision_m', precision_m, 'locate', json(CASE WHEN locate THEN 'true' ELSE 'false' END));
        ALTER TABLE shares DROP COLUMN history_seconds;
        ALTER TABLE shares DROP COLUMN live;
        ALTER TABLE shares DROP COLUMN precision_m;
        ALTER TABLE shares DROP COLUMN locate;
        """
}

/// How a share's device list is stored: comma-separated ids, NULL for all devices; and its
/// scope: `ShareScope`'s JSON.
enum ShareRow {
    static func scopeText(_ scope: ShareScope) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(scope), as: UTF8.self)
    }

    /// A stored scope; a row that does not decode fails the read (the share is refused, never widened).
    static func scope(_ text: String) throws -> ShareScope {
        try JSONDecoder().decode(ShareScope.self, from: Data(text.utf8))
    }

    static func devicesText(_ devices: [UUID]?) -> String? {
        devices.map { $0.map(\.wireString).joined(separator: ",") }
    }

    static func devices(_ text: String?) -> [UUID]? {
        text.map { $0.split(separator: ",").compactMap { UUID(uuidString: String($0)) } }
    }
}
