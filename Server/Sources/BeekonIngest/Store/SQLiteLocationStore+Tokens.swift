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

    package func rotateRefreshToken(presentedHash: String, replacement: RefreshTokenRecord, nowMillis: Int64) async throws(StoreError)
        -> RefreshRotation
    {
        try await write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT subject, family, expires_at, replaced_by, revoked FROM refresh_tokens WHERE token_hash = ?
                        """, arguments: [presentedHash])
            else { return .invalid }
            let subject: String = row[0]
            let family: String = row[1]
            let expires: Int64 = row[2]
            let successor: String? = row[3]
            let revoked: Bool = row[4]
            guard !revoked, expires > nowMillis else { return .invalid }
            if let successor {
                // Grace for a lost response: the presented token may be used again while its
                // successor was never used; once the successor was used, this is a replay.
                let used =
                    try String?.fetchOne(
                        db, sql: "SELECT replaced_by FROM refresh_tokens WHERE token_hash = ?",
                        arguments: [successor]) ?? nil
                if used != nil {
                    try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE family = ?", arguments: [family])
                    return .reused
                }
                try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE token_hash = ?", arguments: [successor])
            }
            try db.execute(
                sql: """
                    INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)
                    """, arguments: [replacement.hash, subject, family, replacement.issuedMillis, replacement.expiresMillis])
            try db.execute(
                sql: "UPDATE refresh_tokens SET replaced_by = ? WHERE token_hash = ?",
                arguments: [replacement.hash, presentedHash])
            return .rotated(subject: subject)
        }
    }
}
