import Foundation
import GRDB

extension SQLiteLocationStore {
    package func signingKey(proposed: [UInt8]) async throws(StoreError) -> [UInt8] {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO server_keys (name, value) VALUES ('access_token_hmac', ?) ON CONFLICT (name) DO NOTHING",
                arguments: [Hex.encode(proposed)])
            let hex = try String.fetchOne(db, sql: "SELECT value FROM server_keys WHERE name = 'access_token_hmac'")
            return hex.flatMap(Hex.decode) ?? proposed
        }
    }

    package func insertRefreshToken(_ r: RefreshTokenRecord) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)
                    """, arguments: [r.hash, r.subject, r.family, r.issuedMillis, r.expiresMillis])
        }
    }

    package func rotateRefreshToken(
        presentedHash: String, replacement: RefreshTokenRecord, nowMillis: Int64, replayWindowMillis: Int64
    ) async throws(StoreError) -> RefreshRotation {
        try await write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT subject, family, expires_at, replaced_by, revoked, rotated_at FROM refresh_tokens WHERE token_hash = ?
                        """, arguments: [presentedHash])
            else { return .invalid }
            let subject: String = row[0]
            let family: String = row[1]
            let expires: Int64 = row[2]
            let successor: String? = row[3]
            let revoked: Bool = row[4]
            let rotated: Int64? = row[5]
            guard expires > nowMillis else { return .invalid }
            let next: RefreshSuccessor? =
                if let successor {
                    try Row.fetchOne(
                        db, sql: "SELECT replaced_by IS NOT NULL, revoked, issued_at FROM refresh_tokens WHERE token_hash = ?",
                        arguments: [successor]
                    ).map { RefreshSuccessor(used: $0[0], revoked: $0[1], issuedMillis: $0[2]) }
                } else { nil }
            switch RefreshSuccessor.verdict(
                revoked: revoked, rotatedMillis: rotated, successor: next, nowMillis: nowMillis, windowMillis: replayWindowMillis)
            {
            case .revokeFamily:
                try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE family = ?", arguments: [family])
                return .reused
            case .replay:
                try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE token_hash = ?", arguments: [successor])
            case .rotate:
                break
            }
            try db.execute(
                sql: """
                    INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)
                    """, arguments: [replacement.hash, subject, family, replacement.issuedMillis, replacement.expiresMillis])
            try db.execute(
                sql: "UPDATE refresh_tokens SET replaced_by = ?, rotated_at = COALESCE(rotated_at, ?) WHERE token_hash = ?",
                arguments: [replacement.hash, nowMillis, presentedHash])
            return .rotated(subject: subject)
        }
    }
}
