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

    /// Credentials an app can ship (issue 52): when a refresh token was first rotated (its
    /// replay window's start); the person an install and a code belong to, the code that enrolled an install,
    /// fleet codes' hourly allowance, revoked codes and who created them.
    static let v12 = [
        "ALTER TABLE refresh_tokens ADD COLUMN rotated_at BIGINT",
        "ALTER TABLE device_bindings ADD COLUMN person TEXT",
        "ALTER TABLE device_bindings ADD COLUMN code_id TEXT",
        "CREATE INDEX device_bindings_code ON device_bindings (code_id, bound_at)",
        "ALTER TABLE enrollment_codes ADD COLUMN person TEXT",
        "ALTER TABLE enrollment_codes ADD COLUMN per_hour INT",
        "ALTER TABLE enrollment_codes ADD COLUMN revoked_at BIGINT",
        "ALTER TABLE enrollment_codes ADD COLUMN created_by TEXT NOT NULL DEFAULT 'admin'",
        "CREATE INDEX enrollment_codes_created ON enrollment_codes (created_at)",
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
                INSERT INTO enrollment_codes (code_hash, label, created_at, expires_at, uses_left, person, per_hour, created_by)
                VALUES (\(code.hash), \(code.label), \(code.createdMillis), \(code.expiresMillis), \(code.usesLeft), \(code.person),
                    \(code.perHour), \(code.createdBy))
                """, logger: self.logger)
        }
    }

    package func redeemEnrollmentCode(hash: String, installId: UUID, refresh r: RefreshTokenRecord, nowMillis: Int64)
        async throws(StoreError) -> EnrollmentRedemption
    {
        let install = installId.wireString
        let codeID = EnrollmentCodeRecord.id(hash: hash)
        return try await transaction { conn in
            // The code's row is locked first: racing devices spend one use (or one hourly slot) each.
            var code: (String?, Int?)?
            for try await row in try await conn.query(
                """
                SELECT person, per_hour FROM enrollment_codes
                WHERE code_hash = \(hash) AND expires_at > \(nowMillis) AND revoked_at IS NULL FOR UPDATE
                """, logger: self.logger
            ).decode((String?, Int?).self) { code = row }
            guard let (person, perHour) = code else { return .invalidCode }
            // Serialises enrollments of one install across instances.
            try await conn.query("SELECT pg_advisory_xact_lock(74657002, hashtext(\(install)))", logger: self.logger)
            var holders: [String?] = []
            var revoked = false
            for try await (holder, gone) in try await conn.query(
                "SELECT person, revoked_at IS NOT NULL FROM device_bindings WHERE install_id = \(install) OR subject = \(install)",
                logger: self.logger
            ).decode((String?, Bool).self) {
                holders.append(holder)
                revoked = revoked || gone
            }
            var history = false
            for try await known in try await conn.query(
                "SELECT EXISTS (SELECT 1 FROM batches WHERE install_id = \(installId))", logger: self.logger
            ).decode(Bool.self) { history = known }
            let verdict = EnrollmentRule.verdict(
                codePerson: person, install: EnrollmentRule.Install(holders: holders, revoked: revoked, hasHistory: history))
            if case .refuse(let why) = verdict { return why }
            if let perHour {
                var recent: [Int64] = []
                for try await at in try await conn.query(
                    """
                    SELECT bound_at FROM device_bindings WHERE code_id = \(codeID) AND bound_at > \(nowMillis - EnrollmentRule.hourMillis)
                    ORDER BY bound_at
                    """, logger: self.logger
                ).decode(Int64.self) { recent.append(at) }
                if let wait = EnrollmentRule.retryAfter(perHour: perHour, recentBindings: recent, nowMillis: nowMillis) {
                    return .rateLimited(retryAfterMillis: wait)
                }
            } else {
                var spent = false
                for try await _ in try await conn.query(
                    "UPDATE enrollment_codes SET uses_left = uses_left - 1 WHERE code_hash = \(hash) AND uses_left > 0 RETURNING uses_left",
                    logger: self.logger
                ).decode(Int.self) { spent = true }
                guard spent else { return .invalidCode }
            }
            if verdict == .reenrol {
                try await conn.query(
                    """
                    UPDATE refresh_tokens SET revoked = TRUE
                    WHERE subject IN (SELECT subject FROM device_bindings WHERE install_id = \(install))
                    """, logger: self.logger)
            }
            try await conn.query(
                """
                INSERT INTO device_bindings (subject, install_id, bound_at, person, code_id)
                VALUES (\(install), \(install), \(nowMillis), \(person), \(codeID))
                ON CONFLICT (subject) DO UPDATE SET bound_at = excluded.bound_at, code_id = excluded.code_id
                """, logger: self.logger)
            try await conn.query(
                """
                INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at)
                VALUES (\(r.hash), \(install), \(r.family), \(r.issuedMillis), \(r.expiresMillis))
                """, logger: self.logger)
            return verdict == .reenrol ? .reenrolled : .enrolled
        }
    }

    package func enrollmentCodes(limit: Int) async throws(StoreError) -> [EnrollmentCodeListing] {
        try await perform { conn in
            var listed: [EnrollmentCodeListing] = []
            for try await (hash, label, created, expires, uses, person, perHour, createdBy, revokedAt, enrolled) in try await conn.query(
                """
                SELECT c.code_hash, c.label, c.created_at, c.expires_at, c.uses_left, c.person, c.per_hour, c.created_by, c.revoked_at,
                    (SELECT COUNT(*) FROM device_bindings b WHERE b.code_id = 'enr_' || substr(c.code_hash, 1, 24))
                FROM enrollment_codes c ORDER BY c.created_at DESC, c.code_hash LIMIT \(limit)
                """, logger: self.logger
            ).decode((String, String?, Int64, Int64, Int, String?, Int?, String, Int64?, Int64).self) {
                listed.append(
                    EnrollmentCodeListing(
                        record: EnrollmentCodeRecord(
                            hash: hash, label: label, createdMillis: created, expiresMillis: expires, usesLeft: uses, person: person,
                            perHour: perHour, createdBy: createdBy),
                        revokedMillis: revokedAt, enrolled: Int(enrolled)))
            }
            return listed
        }
    }

    package func revokeEnrollmentCode(id: String, nowMillis: Int64) async throws(StoreError) -> Bool {
        try await perform { conn in
            var revoked = false
            for try await _ in try await conn.query(
                """
                UPDATE enrollment_codes SET revoked_at = \(nowMillis)
                WHERE 'enr_' || substr(code_hash, 1, 24) = \(id) AND revoked_at IS NULL RETURNING code_hash
                """, logger: self.logger
            ).decode(String.self) { revoked = true }
            return revoked
        }
    }
}
