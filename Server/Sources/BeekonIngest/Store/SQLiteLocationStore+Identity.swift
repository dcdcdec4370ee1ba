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
                sql: "INSERT INTO enrollment_codes (code_hash, label, created_at, expires_at, uses_left) VALUES (?, ?, ?, ?, ?)",
                arguments: [code.hash, code.label, code.createdMillis, code.expiresMillis, code.usesLeft])
        }
    }

    package func redeemEnrollmentCode(hash: String, installId: UUID, refresh r: RefreshTokenRecord, nowMillis: Int64)
        async throws(StoreError) -> EnrollmentRedemption
    {
        let install = installId.wireString
        return try await write { db in
            // One conditional update spends a use: two devices racing for the last use cannot both win.
            try db.execute(
                sql: "UPDATE enrollment_codes SET uses_left = uses_left - 1 WHERE code_hash = ? AND uses_left > 0 AND expires_at > ?",
                arguments: [hash, nowMillis])
            guard db.changesCount == 1 else { return .invalidCode }
            if let revoked = try Bool.fetchOne(
                db, sql: "SELECT MAX(revoked_at IS NOT NULL) FROM device_bindings WHERE install_id = ? OR subject = ?",
                arguments: [install, install])
            {
                // Give the use back: nothing was enrolled.
                try db.execute(sql: "UPDATE enrollment_codes SET uses_left = uses_left + 1 WHERE code_hash = ?", arguments: [hash])
                return revoked ? .installRevoked : .installTaken
            }
            try db.execute(
                sql: "INSERT INTO device_bindings (subject, install_id, bound_at) VALUES (?, ?, ?)",
                arguments: [install, install, nowMillis])
            try db.execute(
                sql: "INSERT INTO refresh_tokens (token_hash, subject, family, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [r.hash, install, r.family, r.issuedMillis, r.expiresMillis])
            return .enrolled
        }
    }
}
