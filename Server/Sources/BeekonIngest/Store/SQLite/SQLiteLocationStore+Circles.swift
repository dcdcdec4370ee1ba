import BeekonWire
import Foundation
import GRDB

/// People and circles (issue 52).
enum SQLiteCircleSchema {
    /// Display names, circles, members with their sharing, invitations; installs by person.
    static let v12 = """
        CREATE TABLE people (person TEXT PRIMARY KEY, display_name TEXT, updated_at INTEGER NOT NULL);
        CREATE TABLE circles (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, created_by TEXT NOT NULL, created_at INTEGER NOT NULL,
            version INTEGER NOT NULL DEFAULT 1);
        CREATE TABLE circle_members (
            circle_id TEXT NOT NULL REFERENCES circles (id) ON DELETE CASCADE, person TEXT NOT NULL, role TEXT NOT NULL,
            joined_at INTEGER NOT NULL, precision_m REAL, hours TEXT, time_zone TEXT, paused_at INTEGER,
            PRIMARY KEY (circle_id, person));
        CREATE INDEX circle_members_person ON circle_members (person);
        CREATE TABLE circle_invitations (
            code_hash TEXT PRIMARY KEY, circle_id TEXT NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
            created_by TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER, used_by TEXT);
        CREATE INDEX circle_invitations_circle ON circle_invitations (circle_id, expires_at);
        CREATE INDEX device_bindings_person ON device_bindings (person);
        """
}

extension SQLiteLocationStore: CircleStore {
    package var circles: any CircleStore { self }

    package func devicePerson(subject: String) async throws(StoreError) -> DevicePerson? {
        try await run { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT person, install_id, revoked_at FROM device_bindings WHERE subject = ?", arguments: [subject]),
                let install = UUID(wire: row[1] as String)
            else { return nil }
            return DevicePerson(person: row[0], installId: install, revoked: (row[2] as Int64?) != nil)
        }
    }

    package func setDisplayName(person: String, name: String?, nowMillis: Int64) async throws(StoreError) {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO people (person, display_name, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (person) DO UPDATE SET display_name = excluded.display_name, updated_at = excluded.updated_at
                    """, arguments: [person, name, nowMillis])
        }
    }

    package func displayName(person: String) async throws(StoreError) -> String? {
        try await run { db in try String.fetchOne(db, sql: "SELECT display_name FROM people WHERE person = ?", arguments: [person]) }
    }

    package func createCircle(_ c: CircleRecord, owner: String, limits: CircleLimits) async throws(StoreError) -> Bool {
        try await write { db in
            let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM circle_members WHERE person = ?", arguments: [owner]) ?? 0
            guard count < limits.circlesPerPerson else { return false }
            try db.execute(
                sql: "INSERT INTO circles (id, name, created_by, created_at, version) VALUES (?, ?, ?, ?, ?)",
                arguments: [c.id, c.name, c.createdBy, c.createdMillis, c.version])
            try db.execute(
                sql: "INSERT INTO circle_members (circle_id, person, role, joined_at) VALUES (?, ?, 'owner', ?)",
                arguments: [c.id, owner, c.createdMillis])
            return true
        }
    }

    package func circles(person: String?, limit: Int) async throws(StoreError) -> [CircleRecord] {
        try await run { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, name, created_by, created_at, version FROM circles
                    WHERE ?1 IS NULL OR id IN (SELECT circle_id FROM circle_members WHERE person = ?1)
                    ORDER BY created_at DESC, id LIMIT ?2
                    """, arguments: [person, limit]
            ).map(Self.circleRecord)
        }
    }

    static func circleRecord(_ row: Row) -> CircleRecord {
        CircleRecord(id: row[0], name: row[1], createdBy: row[2], createdMillis: row[3], version: row[4])
    }

    package func circle(id: String) async throws(StoreError) -> CircleDetail? {
        try await run { db in
            guard
                let record = try Row.fetchOne(
                    db, sql: "SELECT id, name, created_by, created_at, version FROM circles WHERE id = ?", arguments: [id]
                ).map(Self.circleRecord)
            else { return nil }
            let devices = try Row.fetchAll(
                db,
                sql: """
                    SELECT b.person, b.install_id FROM device_bindings b JOIN circle_members m ON m.person = b.person
                    WHERE m.circle_id = ? AND b.revoked_at IS NULL ORDER BY b.bound_at, b.install_id
                    """, arguments: [id])
            var byPerson: [String: [UUID]] = [:]
            for row in devices {
                guard let install = UUID(wire: row[1] as String) else { continue }
                if byPerson[row[0], default: []].contains(install) { continue }
                byPerson[row[0], default: []].append(install)
            }
            let members = try Row.fetchAll(
                db,
                sql: """
                    SELECT m.person, p.display_name, m.role, m.joined_at, m.precision_m, m.hours, m.time_zone, m.paused_at
                    FROM circle_members m LEFT JOIN people p ON p.person = m.person
                    WHERE m.circle_id = ? ORDER BY m.joined_at, m.person
                    """, arguments: [id]
            ).map { row in
                CircleMember(
                    person: row[0], displayName: row[1], role: CircleRole(rawValue: row[2]) ?? .member, joinedMillis: row[3],
                    sharing: MemberSharing(precisionMeters: row[4], hours: row[5], timeZone: row[6], pausedMillis: row[7]),
                    devices: byPerson[row[0]] ?? [])
            }
            return CircleDetail(circle: record, members: members)
        }
    }

    package func deleteCircle(id: String) async throws(StoreError) -> Bool {
        try await write { db in
            try Self.deleteCircle(db, id)
            return db.changesCount == 1
        }
    }

    private static func deleteCircle(_ db: Database, _ id: String) throws {
        // Children first (the foreign keys' cascade needs PRAGMA foreign_keys; this does not).
        try db.execute(sql: "DELETE FROM circle_invitations WHERE circle_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM circle_members WHERE circle_id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM circles WHERE id = ?", arguments: [id])
    }

    package func insertInvitation(_ i: CircleInvitation, limits: CircleLimits, nowMillis: Int64) async throws(StoreError) -> Bool {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM circles WHERE id = ?)", arguments: [i.circleId]) == true
            else { return false }
            let open =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM circle_invitations WHERE circle_id = ? AND used_at IS NULL AND expires_at > ?",
                    arguments: [i.circleId, nowMillis]) ?? 0
            guard open < limits.invitationsPerCircle else { return false }
            // Used and expired invitations of the circle are of no use to anyone: dropped here.
            try db.execute(
                sql: "DELETE FROM circle_invitations WHERE circle_id = ? AND (used_at IS NOT NULL OR expires_at <= ?)",
                arguments: [i.circleId, nowMillis])
            try db.execute(
                sql: "INSERT INTO circle_invitations (code_hash, circle_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [i.hash, i.circleId, i.createdBy, i.createdMillis, i.expiresMillis])
            return true
        }
    }

    package func acceptInvitation(hash: String, person: String, nowMillis: Int64, limits: CircleLimits) async throws(StoreError)
        -> CircleJoin
    {
        try await write { db in
            guard
                let circle = try String.fetchOne(
                    db, sql: "SELECT circle_id FROM circle_invitations WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
                    arguments: [hash, nowMillis])
            else { return .invalid }
            let counts = try Row.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM circle_members WHERE circle_id = ?1 AND person = ?2),
                        (SELECT COUNT(*) FROM circle_members WHERE circle_id = ?1),
                        (SELECT COUNT(*) FROM circle_members WHERE person = ?2)
                    """, arguments: [circle, person])
            let verdict = CircleRule.join(
                circleId: circle, isMember: counts?[0] ?? false, members: counts?[1] ?? 0, circlesOfPerson: counts?[2] ?? 0,
                limits: limits)
            guard case .joined = verdict else { return verdict }
            try db.execute(
                sql: "UPDATE circle_invitations SET used_at = ?, used_by = ? WHERE code_hash = ?", arguments: [nowMillis, person, hash])
            try db.execute(
                sql: "INSERT INTO circle_members (circle_id, person, role, joined_at) VALUES (?, ?, 'member', ?)",
                arguments: [circle, person, nowMillis])
            try db.execute(sql: "UPDATE circles SET version = version + 1 WHERE id = ?", arguments: [circle])
            return verdict
        }
    }

    package func removeMember(circleId: String, person: String) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM circle_members WHERE circle_id = ? AND person = ?", arguments: [circleId, person])
            guard db.changesCount == 1 else { return false }
            let left = try Row.fetchAll(
                db, sql: "SELECT person, role FROM circle_members WHERE circle_id = ? ORDER BY joined_at, person", arguments: [circleId])
            if left.isEmpty {
                try Self.deleteCircle(db, circleId)
                return true
            }
            if !left.contains(where: { $0[1] as String == CircleRole.owner.rawValue }) {
                try db.execute(
                    sql: "UPDATE circle_members SET role = 'owner' WHERE circle_id = ? AND person = ?",
                    arguments: [circleId, left[0][0] as String])
            }
            try db.execute(sql: "UPDATE circles SET version = version + 1 WHERE id = ?", arguments: [circleId])
            return true
        }
    }

    package func setSharing(circleId: String, person: String, sharing s: MemberSharing) async throws(StoreError) -> Bool {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE circle_members SET precision_m = ?, hours = ?, time_zone = ?, paused_at = ?
                    WHERE circle_id = ? AND person = ?
                    """, arguments: [s.precisionMeters, s.hours, s.timeZone, s.pausedMillis, circleId, person])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: "UPDATE circles SET version = version + 1 WHERE id = ?", arguments: [circleId])
            return true
        }
    }

    package func circleVersion(id: String) async throws(StoreError) -> Int64? {
        try await inlineRead { db in try Int64.fetchOne(db, sql: "SELECT version FROM circles WHERE id = ?", arguments: [id]) }
    }

    package func latestLocateRequest(installId: UUID, requestedBy: String) async throws(StoreError) -> LocateRequest? {
        try await run { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.locateColumns) FROM locate_requests WHERE install_id = ? AND requested_by = ?
                    ORDER BY created_at DESC, id DESC LIMIT 1
                    """, arguments: [installId.wireString, requestedBy]
            ).flatMap(Self.locate)
        }
    }
}
