import BeekonWire
import Foundation
import GRDB

extension SQLiteLocationStore: PushTokenStore {
    package var pushTokens: any PushTokenStore { self }

    package func setPushToken(_ t: PushToken) async throws(StoreError) {
        try await write { db in
            // A token belongs to the install that registered it last (see `PushTokenStore`).
            try db.execute(
                sql: "DELETE FROM push_tokens WHERE token = ? AND provider = ? AND install_id <> ?",
                arguments: [t.token, t.provider.rawValue, t.installId.wireString])
            try db.execute(
                sql: """
                    INSERT INTO push_tokens (install_id, provider, token, environment, topic, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (install_id) DO UPDATE SET provider = excluded.provider, token = excluded.token,
                    environment = excluded.environment, topic = excluded.topic, updated_at = excluded.updated_at
                    """,
                arguments: [
                    t.installId.wireString, t.provider.rawValue, t.token, t.environment?.rawValue, t.topic, t.updatedAtMillis,
                ])
        }
    }

    package func pushToken(installId: UUID) async throws(StoreError) -> PushToken? {
        try await run { db in try Self.pushToken(db, installId: installId) }
    }

    /// The install's token, read on `db` (also inside a write transaction).
    static func pushToken(_ db: Database, installId: UUID) throws -> PushToken? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT provider, token, environment, topic, updated_at FROM push_tokens WHERE install_id = ?",
                arguments: [installId.wireString]),
            let provider = PushToken.Provider(rawValue: row[0])
        else { return nil }
        return PushToken(
            installId: installId, provider: provider, token: row[1],
            environment: (row[2] as String?).flatMap(PushToken.Environment.init(rawValue:)), topic: row[3],
            updatedAtMillis: row[4])
    }

    @discardableResult
    package func removePushToken(installId: UUID, ifToken: String?) async throws(StoreError) -> Bool {
        try await write { db in
            if let ifToken {
                try db.execute(
                    sql: "DELETE FROM push_tokens WHERE install_id = ? AND token = ?", arguments: [installId.wireString, ifToken])
            } else {
                try db.execute(sql: "DELETE FROM push_tokens WHERE install_id = ?", arguments: [installId.wireString])
            }
            return db.changesCount > 0
        }
    }
}
