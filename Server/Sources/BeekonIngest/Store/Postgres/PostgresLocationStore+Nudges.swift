import BeekonWire
import Foundation
import PostgresNIO

extension PostgresLocationStore: NudgeStore {
    package var nudges: any NudgeStore { self }

    package func claimNudge(installId: UUID, silentSinceMillis: Int64, nowMillis: Int64, policy: NudgePolicy) async throws(StoreError)
        -> NudgeClaim
    {
        let install = installId.wireString
        return try await transaction { conn in
            // Serialises the claims of one install across instances (its row may not exist yet).
            try await conn.query("SELECT pg_advisory_xact_lock(74657004, hashtext(\(install)))", logger: self.logger)
            var revoked = false
            for try await gone in try await conn.query(
                "SELECT EXISTS (SELECT 1 FROM device_bindings WHERE install_id = \(install) AND revoked_at IS NOT NULL)",
                logger: self.logger
            ).decode(Bool.self) { revoked = gone }
            if revoked { return NudgeClaim.never(reason: "revoked") }
            guard let token = try await self.pushToken(conn, installId: installId) else { return NudgeClaim.never(reason: "no push token") }
            let previous = try await self.nudgeRecord(conn, installId)
            switch policy.verdict(previous: previous, silentSinceMillis: silentSinceMillis, nowMillis: nowMillis) {
            case .wait(let until): return .wait(untilMillis: until)
            case .done: return .never(reason: "nudged \(policy.limit) times for this silence")
            case .send(let r):
                try await conn.query(
                    """
                    INSERT INTO nudges (install_id, silent_since, sent_at, sent_count)
                    VALUES (\(installId), \(r.silentSinceMillis), \(r.sentAtMillis), \(r.count))
                    ON CONFLICT (install_id) DO UPDATE SET silent_since = excluded.silent_since, sent_at = excluded.sent_at,
                        sent_count = excluded.sent_count
                    """, logger: self.logger)
                return .send(token, r)
            }
        }
    }

    package func nudgeRecord(installId: UUID) async throws(StoreError) -> NudgeRecord? {
        try await perform { conn in try await self.nudgeRecord(conn, installId) }
    }

    private func nudgeRecord(_ conn: PostgresConnection, _ installId: UUID) async throws -> NudgeRecord? {
        var found: NudgeRecord?
        for try await (since, sent, count) in try await conn.query(
            "SELECT silent_since, sent_at, sent_count FROM nudges WHERE install_id = \(installId)", logger: logger
        ).decode((Int64, Int64, Int).self) {
            found = NudgeRecord(silentSinceMillis: since, sentAtMillis: sent, count: count)
        }
        return found
    }
}

/// The once-a-day nudge bookkeeping, and the index that lets a push token belong to one install
/// only (schema version 14, "v14-nudges").
enum PostgresNudgeSchema {
    static let v14 = [
        "CREATE TABLE nudges (install_id UUID PRIMARY KEY, silent_since BIGINT NOT NULL, sent_at BIGINT NOT NULL, sent_count INT NOT NULL)",
        "CREATE INDEX push_tokens_token ON push_tokens (token)",
    ]
}
