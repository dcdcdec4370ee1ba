import Foundation
import PostgresNIO

extension PostgresLocationStore {
    package func signingKey(proposed: [UInt8]) async throws(StoreError) -> [UInt8] {
        // Start-up work, like migrations: no request deadline.
        do {
            return try await client.withTransaction(logger: logger) { conn in try await self.loadOrCreateKey(conn, proposed) }
        } catch {
            throw Self.storeError(error)
        }
    }

    private func loadOrCreateKey(_ conn: PostgresConnection, _ proposed: [UInt8]) async throws -> [UInt8] {
        try await conn.query(
            """
            INSERT INTO server_keys (name, value) VALUES ('access_token_hmac', \(Hex.encode(proposed)))
            ON CONFLICT (name) DO NOTHING
            """, logger: logger)
        var key = proposed
        for try await hex in try await conn.query(
            "SELECT value FROM server_keys WHERE name = 'access_token_hmac'",
            logger: logger
        ).decode(String.self) {
            key = Hex.decode(hex) ?? proposed
        }
        return key
    }

    package func insertRefreshToken(_ r: RefreshTokenRecord) async throws(StoreError) {
        try await perform { conn in
            try await conn.query(
                """
                INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at)
                VALUES (\(r.hash), \(r.subject), \(r.family), \(r.issuedMillis), \(r.expiresMillis))
                """, logger: self.logger)
        }
    }

    package func rotateRefreshToken(
        presentedHash: String, replacement: RefreshTokenRecord, nowMillis: Int64, replayWindowMillis: Int64
    ) async throws(StoreError) -> RefreshRotation {
        try await transaction { conn in
            // FOR UPDATE serialises concurrent presentations of the same token across instances.
            var found: (String, String, Int64, String?, Bool, Int64?)?
            for try await row in try await conn.query(
                """
                SELECT subject, family, expires_at, replaced_by, revoked, rotated_at FROM refresh_tokens
                WHERE token_hash = \(presentedHash) FOR UPDATE
                """, logger: self.logger
            ).decode((String, String, Int64, String?, Bool, Int64?).self) { found = row }
            guard let (subject, family, expires, successor, revoked, rotated) = found, expires > nowMillis else {
                return .invalid
            }
            var next: RefreshSuccessor?
            if let successor {
                for try await (used, retired, issued) in try await conn.query(
                    """
                    SELECT replaced_by IS NOT NULL, revoked, issued_at FROM refresh_tokens WHERE token_hash = \(successor) FOR UPDATE
                    """, logger: self.logger
                ).decode((Bool, Bool, Int64).self) { next = RefreshSuccessor(used: used, revoked: retired, issuedMillis: issued) }
            }
            switch RefreshSuccessor.verdict(
                revoked: revoked, rotatedMillis: rotated, successor: next, nowMillis: nowMillis, windowMillis: replayWindowMillis)
            {
            case .revokeFamily:
                try await conn.query("UPDATE refresh_tokens SET revoked = TRUE WHERE family = \(family)", logger: self.logger)
                return .reused
            case .replay:
                try await conn.query(
                    "UPDATE refresh_tokens SET revoked = TRUE WHERE token_hash = \(successor ?? "")", logger: self.logger)
            case .rotate:
                break
            }
            try await conn.query(
                """
                INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at)
                VALUES (\(replacement.hash), \(subject), \(family), \(replacement.issuedMillis), \(replacement.expiresMillis))
                """, logger: self.logger)
            try await conn.query(
                """
                UPDATE refresh_tokens SET replaced_by = \(replacement.hash), rotated_at = COALESCE(rotated_at, \(nowMillis))
                WHERE token_hash = \(presentedHash)
                """, logger: self.logger)
            return .rotated(subject: subject)
        }
    }
}
