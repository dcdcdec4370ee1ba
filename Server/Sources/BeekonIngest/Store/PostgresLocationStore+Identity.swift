import BeekonWire
import Foundation
import PostgresNIO

/// Device identity (issue 28): which install each device credential acts for, and the
/// enrollment codes admins hand out.
enum PostgresIdentitySchema {
    static let v8 = [
        """
        CREATE TABLE device_bindings (
            subject TEXT PRIMARY KEY, install_id TEXT NOT NULL, bound_at BIGINT NOT NULL, revoked_at BIGINT)
        """,
        "CREATE INDEX device_bindings_install ON device_bindings (install_id)",
        """
        CREATE TABLE enrollment_codes (
            code_hash TEXT PRIMARY KEY, label TEXT, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
            uses_left INT NOT NULL)
        """,
    ]
}

extension PostgresLocationStore {
    package func deviceBinding(subject: String, claim: UUID, nowMillis: Int64) async throws(StoreError) -> DeviceBinding {
        try await perform { conn in
            if let bound = try await self.binding(conn, subject: subject) { return bound }
            // First use: bound only to an install no other credential holds and no admin
            // revoked (XR-2; an unbound token took over enrolled and revoked installs).
            let install = claim.wireString
            try await conn.query(
                """
                INSERT INTO device_bindings (subject, install_id, bound_at)
                SELECT \(subject), \(install), \(nowMillis)
                WHERE NOT EXISTS (SELECT 1 FROM device_bindings WHERE install_id = \(install))
                ON CONFLICT (subject) DO NOTHING
                """, logger: self.logger)
            if let bound = try await self.binding(conn, subject: subject) { return bound }
            var revoked = false
            for try await any in try await conn.query(
                "SELECT COALESCE(bool_or(revoked_at IS NOT NULL), false) FROM device_bindings WHERE install_id = \(install)",
                logger: self.logger
            ).decode(Bool.self) {
                revoked = any
            }
            return DeviceBinding.refused(claim: claim, revokedClaim: revoked)
        }
    }

    private func binding(_ conn: PostgresConnection, subject: String) async throws -> DeviceBinding? {
        var found: DeviceBinding?
        for try await (install, revokedAt) in try await conn.query(
            "SELECT install_id, revoked_at FROM device_bindings WHERE subject = \(subject)", logger: logger
        ).decode((String, Int64?).self) {
            if let id = UUID(uuidString: install) { found = DeviceBinding(installId: id, revoked: revokedAt != nil) }
        }
        return found
    }

    package func revokeDevice(installId: UUID, nowMillis: Int64) async throws(StoreError) -> Int {
        let install = installId.wireString
        return try await transaction { conn in
            try await conn.query(
                """
                INSERT INTO device_bindings (subject, install_id, bound_at) VALUES (\(install), \(install), \(nowMillis))
                ON CONFLICT (subject) DO NOTHING
                """, logger: self.logger)
            var count = 0
            for try await _ in try await conn.query(
                """
                UPDATE device_bindings SET revoked_at = \(nowMillis) WHERE install_id = \(install) AND revoked_at IS NULL
                RETURNING subject
                """, logger: self.logger
            ).decode(String.self) { count += 1 }
            try await conn.query(
                """
                UPDATE refresh_tokens SET revoked = TRUE
                WHERE subject IN (SELECT subject FROM device_bindings WHERE install_id = \(install))
                """, logger: self.logger)
            return count
        }
    }

    package func insertEnrollmentCode(_ code: EnrollmentCodeRecord) async throws(StoreError) {
        try await perform { conn in
            try await conn.query(
                """
                INSERT INTO enrollment_codes (code_hash, label, created_at, expires_at, uses_left)
                VALUES (\(code.hash), \(code.label), \(code.createdMillis), \(code.expiresMillis), \(code.usesLeft))
                """, logger: self.logger)
        }
    }

    package func redeemEnrollmentCode(hash: String, installId: UUID, refresh r: RefreshTokenRecord, nowMillis: Int64)
        async throws(StoreError) -> EnrollmentRedemption
    {
        let install = installId.wireString
        return try await transaction { conn in
            // The conditional update locks the code's row: racing devices spend one use each, never the same one.
            var spent = false
            for try await _ in try await conn.query(
                """
                UPDATE enrollment_codes SET uses_left = uses_left - 1
                WHERE code_hash = \(hash) AND uses_left > 0 AND expires_at > \(nowMillis) RETURNING uses_left
                """, logger: self.logger
            ).decode(Int.self) { spent = true }
            guard spent else { return .invalidCode }
            // Serialises enrollments of one install across instances.
            try await conn.query("SELECT pg_advisory_xact_lock(74657002, hashtext(\(install)))", logger: self.logger)
            var existing: Bool?
            for try await revoked in try await conn.query(
                "SELECT revoked_at IS NOT NULL FROM device_bindings WHERE install_id = \(install) OR subject = \(install)",
                logger: self.logger
            ).decode(Bool.self) { existing = (existing ?? false) || revoked }
            if let revoked = existing {
                try await conn.query(
                    "UPDATE enrollment_codes SET uses_left = uses_left + 1 WHERE code_hash = \(hash)", logger: self.logger)
                return revoked ? .installRevoked : .installTaken
            }
            try await conn.query(
                "INSERT INTO device_bindings (subject, install_id, bound_at) VALUES (\(install), \(install), \(nowMillis))",
                logger: self.logger)
            try await conn.query(
                """
                INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at)
                VALUES (\(r.hash), \(install), \(r.family), \(r.issuedMillis), \(r.expiresMillis))
                """, logger: self.logger)
            return .enrolled
        }
    }
}
