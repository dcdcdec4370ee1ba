import BeekonWire
import Foundation
import GRDB

/// Device identity (issue 28): which install each device credential acts for, and the
/// enrollment codes admins hand out.
enum SQLiteIdentitySchema {
    static let v8 = """
        CREATE TABLE device_bindings (
            subject TEXT PRIMARY KEY, install_id TEXT NOT NULL, bound_at INTEGER NOT NULL, revoked_at INTEGER);
        CREATE INDEX device_bindings_install ON device_bindings (install_id);
        CREATE TABLE enrollment_codes (
            code_hash TEXT PRIMARY KEY, label TEXT, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
            uses_left INTEGER NOT NULL);
        """

    /// Credentials an app can ship (issue 52): when a refresh token was first rotated (its
    /// replay window's start); the person an install and a code belong to, the code that enrolled an install,
    /// fleet codes' hourly allowance, revoked codes and who created them.
    static let v11 = """
        ALTER TABLE refresh_tokens ADD COLUMN rotated_at INTEGER;
        ALTER TABLE device_bindings ADD COLUMN person TEXT;
        ALTER TABLE device_bindings ADD COLUMN code_id TEXT;
        CREATE INDEX device_bindings_code ON device_bindings (code_id, bound_at);
        ALTER TABLE enrollment_codes ADD COLUMN person TEXT;
        ALTER TABLE enrollment_codes ADD COLUMN per_hour INTEGER;
        ALTER TABLE enrollment_codes ADD COLUMN revoked_at INTEGER;
        ALTER TABLE enrollment_codes ADD COLUMN created_by TEXT NOT NULL DEFAULT 'admin';
        CREATE INDEX enrollment_codes_created ON enrollment_codes (created_at);
        """
}

extension SQLiteLocationStore {
    package func deviceBinding(subject: String, claim: UUID, nowMillis: Int64) async throws(StoreError) -> DeviceBinding {
        // The common case is a read (WAL readers do not wait for the writer), on every upload:
        // one indexed lookup, run inline.
        if let bound = try await inlineRead({ db in try Self.binding(db, subject: subject) }) { return bound }
        // First use: bound only to an install no other credential holds and no admin revoked
        // (XR-2; an unbound token took over enrolled and revoked installs).
        return try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO device_bindings (subject, install_id, bound_at)
                    SELECT ?1, ?2, ?3 WHERE NOT EXISTS (SELECT 1 FROM device_bindings WHERE install_id = ?2)
                    ON CONFLICT (subject) DO NOTHING
                    """,
                arguments: [subject, claim.wireString, nowMillis])
            if let bound = try Self.binding(db, subject: subject) { return bound }
            let revoked = try Bool.fetchOne(
                db, sql: "SELECT MAX(revoked_at IS NOT NULL) FROM device_bindings WHERE install_id = ?", arguments: [claim.wireString])
            return DeviceBinding.refused(claim: claim, revokedClaim: revoked ?? false)
        }
    }

    static func binding(_ db: Database, subject: String) throws -> DeviceBinding? {
        guard
            // Every device upload asks: a cached statement (compiling runs GRDB's authorizer).
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT install_id, revoked_at FROM device_bindings WHERE subject = ?"), arguments: [subject]),
            let install = UUID(wire: row[0] as String)
        else { return nil }
        return DeviceBinding(installId: install, revoked: (row[1] as Int64?) != nil)
    }

    package func revokeDevice(installId: UUID, nowMillis: Int64) async throws(StoreError) -> Int {
        let install = installId.wireString
        return try await write { db in
            try db.execute(
                sql: "INSERT INTO device_bindings (subject, install_id, bound_at) VALUES (?, ?, ?) ON CONFLICT (subject) DO NOTHING",
                arguments: [install, install, nowMillis])
            try db.execute(
                sql: "UPDATE device_bindings SET revoked_at = ? WHERE install_id = ? AND revoked_at IS NULL",
                arguments: [nowMillis, install])
            let count = db.changesCount
            try db.execute(
                sql: """
                    UPDATE refresh_tokens SET revoked = 1
                    WHERE subject IN (SELECT subject FROM device_bindings WHERE install_id = ?)
                    """, arguments: [install])
            return count
        }
    }

    package func insertEnrollmentCode(_ code: EnrollmentCodeRecord) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO enrollment_codes (code_hash, label, created_at, expires_at, uses_left, person, per_hour, created_by)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    code.hash, code.label, code.createdMillis, code.expiresMillis, code.usesLeft, code.person, code.perHour,
                    code.createdBy,
                ])
        }
    }

    package func redeemEnrollmentCode(hash: String, installId: UUID, refresh r: RefreshTokenRecord, nowMillis: Int64)
        async throws(StoreError) -> EnrollmentRedemption
    {
        let install = installId.wireString
        let codeID = EnrollmentCodeRecord.id(hash: hash)
        // One write transaction: the code's uses and the install's state are read and changed
        // with no other writer in between, so a burst cannot spend a use twice.
        return try await write { db in
            guard
                let code = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT person, per_hour, uses_left FROM enrollment_codes
                        WHERE code_hash = ? AND expires_at > ? AND revoked_at IS NULL
                        """, arguments: [hash, nowMillis])
            else { return .invalidCode }
            let person: String? = code[0]
            let perHour: Int? = code[1]
            let holders = try Row.fetchAll(
                db, sql: "SELECT person, revoked_at IS NOT NULL FROM device_bindings WHERE install_id = ? OR subject = ?",
                arguments: [install, install])
            let history = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM batches WHERE install_id = ?)", arguments: [install])
            let verdict = EnrollmentRule.verdict(
                codePerson: person,
                install: EnrollmentRule.Install(
                    holders: holders.map { $0[0] }, revoked: holders.contains { $0[1] as Bool }, hasHistory: history ?? false))
            if case .refuse(let why) = verdict { return why }
            if let perHour {
                let recent = try Int64.fetchAll(
                    db, sql: "SELECT bound_at FROM device_bindings WHERE code_id = ? AND bound_at > ? ORDER BY bound_at",
                    arguments: [codeID, nowMillis - EnrollmentRule.hourMillis])
                if let wait = EnrollmentRule.retryAfter(perHour: perHour, recentBindings: recent, nowMillis: nowMillis) {
                    return .rateLimited(retryAfterMillis: wait)
                }
            } else {
                try db.execute(
                    sql: "UPDATE enrollment_codes SET uses_left = uses_left - 1 WHERE code_hash = ? AND uses_left > 0", arguments: [hash])
                guard db.changesCount == 1 else { return .invalidCode }
            }
            if verdict == .reenrol {
                try db.execute(
                    sql:
                        "UPDATE refresh_tokens SET revoked = 1 WHERE subject IN (SELECT subject FROM device_bindings WHERE install_id = ?)",
                    arguments: [install])
            }
            try db.execute(
                sql: """
                    INSERT INTO device_bindings (subject, install_id, bound_at, person, code_id) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (subject) DO UPDATE SET bound_at = excluded.bound_at, code_id = excluded.code_id
                    """,
                arguments: [install, install, nowMillis, person, codeID])
            try db.execute(
                sql: "INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [r.hash, install, r.family, r.issuedMillis, r.expiresMillis])
            return verdict == .reenrol ? .reenrolled : .enrolled
        }
    }

    package func enrollmentCodes(limit: Int) async throws(StoreError) -> [EnrollmentCodeListing] {
        try await runOne { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT c.code_hash, c.label, c.created_at, c.expires_at, c.uses_left, c.person, c.per_hour, c.created_by,
                        c.revoked_at, (SELECT COUNT(*) FROM device_bindings b WHERE b.code_id = 'enr_' || substr(c.code_hash, 1, 24))
                    FROM enrollment_codes c ORDER BY c.created_at DESC, c.code_hash LIMIT ?
                    """, arguments: [limit]
            ).map { row in
                EnrollmentCodeListing(
                    record: EnrollmentCodeRecord(
                        hash: row[0], label: row[1], createdMillis: row[2], expiresMillis: row[3], usesLeft: row[4], person: row[5],
                        perHour: row[6], createdBy: row[7]),
                    revokedMillis: row[8], enrolled: row[9])
            }
        }
    }

    package func revokeEnrollmentCode(id: String, nowMillis: Int64) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(
                sql: "UPDATE enrollment_codes SET revoked_at = ? WHERE 'enr_' || substr(code_hash, 1, 24) = ? AND revoked_at IS NULL",
                arguments: [nowMillis, id])
            return db.changesCount > 0
        }
    }
}
