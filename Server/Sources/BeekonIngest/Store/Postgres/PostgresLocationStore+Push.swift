import BeekonWire
import Foundation
import PostgresNIO

extension PostgresLocationStore: PushTokenStore {
    package var pushTokens: any PushTokenStore { self }

    package func setPushToken(_ t: PushToken) async throws(StoreError) {
        try await transaction { conn in
            // A token belongs to the install that registered it last (see `PushTokenStore`).
            try await conn.query(
                """
                DELETE FROM push_tokens WHERE token = \(t.token) AND provider = \(t.provider.rawValue) AND install_id <> \(t.installId)
                """, logger: self.logger)
            try await conn.query(
                """
                INSERT INTO push_tokens (install_id, provider, token, environment, topic, updated_at)
                VALUES (\(t.installId), \(t.provider.rawValue), \(t.token), \(t.environment?.rawValue), \(t.topic), \(t.updatedAtMillis))
                ON CONFLICT (install_id) DO UPDATE SET provider = excluded.provider, token = excluded.token,
                    environment = excluded.environment, topic = excluded.topic, updated_at = excluded.updated_at
                """, logger: self.logger)
        }
    }

    package func pushToken(installId: UUID) async throws(StoreError) -> PushToken? {
        try await perform { conn in try await self.pushToken(conn, installId: installId) }
    }

    /// The install's token, read on `conn` (also inside a transaction).
    func pushToken(_ conn: PostgresConnection, installId: UUID) async throws -> PushToken? {
        let rows = try await conn.query(
            "SELECT provider, token, environment, topic, updated_at FROM push_tokens WHERE install_id = \(installId)",
            logger: logger
        ).decode((String, String, String?, String?, Int64).self)
        for try await (provider, token, environment, topic, updated) in rows {
            guard let provider = PushToken.Provider(rawValue: provider) else { return nil }
            return PushToken(
                installId: installId, provider: provider, token: token,
                environment: environment.flatMap(PushToken.Environment.init(rawValue:)), topic: topic, updatedAtMillis: updated)
        }
        return nil
    }

    @discardableResult
    package func removePushToken(installId: UUID, ifToken: String?) async throws(StoreError) -> Bool {
        try await perform { conn in
            var removed = false
            let rows =
                if let ifToken {
                    try await conn.query(
                        "DELETE FROM push_tokens WHERE install_id = \(installId) AND token = \(ifToken) RETURNING 1", logger: self.logger)
                } else {
                    try await conn.query("DELETE FROM push_tokens WHERE install_id = \(installId) RETURNING 1", logger: self.logger)
                }
            for try await _ in rows { removed = true }
            return removed
        }
    }
}
