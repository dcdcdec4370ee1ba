import BeekonWire
import Foundation
import GRDB

extension SQLiteLocationStore: NudgeStore {
    package var nudges: any NudgeStore { self }

    package func claimNudge(installId: UUID, silentSinceMillis: Int64, nowMillis: Int64, policy: NudgePolicy) async throws(StoreError)
        -> NudgeClaim
    {
        let install = installId.wireString
        // One write transaction: no other writer (instance or task) reads the record between
        // this read and this write.
        return try await write { db in
            if try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM device_bindings WHERE install_id = ? AND revoked_at IS NOT NULL)",
                arguments: [install]) ?? false
            {
                return .never(reason: "revoked")
            }
            guard let token = try Self.pushToken(db, installId: installId) else { return .never(reason: "no push token") }
            let previous = try Self.nudgeRecord(db, install)
            switch policy.verdict(previous: previous, silentSinceMillis: silentSinceMillis, nowMillis: nowMillis) {
            case .wait(let until): return .wait(untilMillis: until)
            case .done: return .never(reason: "nudged \(policy.limit) times for this silence")
            case .send(let record):
                try db.execute(
                    sql: """
                        INSERT INTO nudges (install_id, silent_since, sent_at, sent_count) VALUES (?, ?, ?, ?)
                        ON CONFLICT (install_id) DO UPDATE SET silent_since = excluded.silent_since, sent_at = excluded.sent_at,
                        sent_count = excluded.sent_count
                        """,
                    arguments: [install, record.silentSinceMillis, record.sentAtMillis, record.count])
                return .send(token, record)
            }
        }
    }

    package func nudgeRecord(installId: UUID) async throws(StoreError) -> NudgeRecord? {
        try await run { db in try Self.nudgeRecord(db, installId.wireString) }
    }

    private static func nudgeRecord(_ db: Database, _ install: String) throws -> NudgeRecord? {
        try Row.fetchOne(db, sql: "SELECT silent_since, sent_at, sent_count FROM nudges WHERE install_id = ?", arguments: [install])
            .map { NudgeRecord(silentSinceMillis: $0[0], sentAtMillis: $0[1], count: $0[2]) }
    }
}

/// The once-a-day nudge bookkeeping, and the index that lets a push token belong to one install
/// only (migration `v13-nudges`).
enum SQLiteNudgeSchema {
    static let v13 = """
        CREATE TABLE nudges (
            install_id TEXT PRIMARY KEY, silent_since INTEGER NOT NULL, sent_at INTEGER NOT NULL, sent_count INTEGER NOT NULL);
        CREATE INDEX push_tokens_token ON push_tokens (token);
        """
}
