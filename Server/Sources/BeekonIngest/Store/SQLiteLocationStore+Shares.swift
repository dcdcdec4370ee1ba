import Foundation
import GRDB

extension SQLiteLocationStore {
    static let shareColumns = "id, label, devices, created_at, expires_at, history_seconds, live, precision_m, revoked_at, locate"

    package func createShare(_ share: Share, tokenHash: String) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO shares (id, token_hash, label, devices, created_at, expires_at, history_seconds, live, precision_m, locate)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    share.id, tokenHash, share.label, ShareRow.devicesText(share.devices), share.createdAtMillis,
                    share.expiresAtMillis, share.historySeconds, share.live, share.precisionMeters, share.locate,
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

    static func share(_ row: Row) -> Share {
        Share(
            id: row[0], label: row[1], devices: ShareRow.devices(row[2]), createdAtMillis: row[3], expiresAtMillis: row[4],
            historySeconds: row[5], live: row[6], precisionMeters: row[7], revokedAtMillis: row[8], locate: row[9])
    }
}

/// How a share's device list is stored: comma-separated ids, NULL for all devices.
enum ShareRow {
    static func devicesText(_ devices: [UUID]?) -> String? {
        devices.map { $0.map(\.wireString).joined(separator: ",") }
    }

    static func devices(_ text: String?) -> [UUID]? {
        text.map { $0.split(separator: ",").compactMap { UUID(uuidString: String($0)) } }
    }
}
