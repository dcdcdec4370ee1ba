import BeekonWire
import Foundation
import PostgresNIO

/// People and circles (issue 52), version 13 "v13-circles".
enum PostgresCircleSchema {
    static let v13 = [
        "CREATE TABLE people (person TEXT PRIMARY KEY, display_name TEXT, updated_at BIGINT NOT NULL)",
        """
        CREATE TABLE circles (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, created_by TEXT NOT NULL, created_at BIGINT NOT NULL,
            version BIGINT NOT NULL DEFAULT 1)
        """,
        """
        CREATE TABLE circle_members (
            circle_id TEXT NOT NULL REFERENCES circles (id) ON DELETE CASCADE, person TEXT NOT NULL, role TEXT NOT NULL,
            joined_at BIGINT NOT NULL, precision_m DOUBLE PRECISION, hours TEXT, time_zone TEXT, paused_at BIGINT,
            PRIMARY KEY (circle_id, person))
        """,
        "CREATE INDEX circle_members_person ON circle_members (person)",
        """
        CREATE TABLE circle_invitations (
            code_hash TEXT PRIMARY KEY, circle_id TEXT NOT NULL REFERENCES circles (id) ON DELETE CASCADE,
            created_by TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT, used_by TEXT)
        """,
        "CREATE INDEX circle_invitations_circle ON circle_invitations (circle_id, expires_at)",
        "CREATE INDEX device_bindings_person ON device_bindings (person)",
    ]
}

extension PostgresLocationStore: CircleStore {
    package var circles: any CircleStore { self }

    /// Serialises one circle's (or one person's) membership changes across instances until the
    /// transaction ends: counts read under it stay true until the insert.
    private func lock(_ conn: PostgresConnection, _ key: String) async throws {
        try await conn.query("SELECT pg_advisory_xact_lock(74657013, hashtext(\(key)))", logger: logger)
    }

    private func count(_ conn: PostgresConnection, _ query: PostgresQuery) async throws -> Int {
        var n = 0
        for try await c in try await conn.query(query, logger: logger).decode(Int.self) { n = c }
        return n
    }

    package func devicePerson(subject: String) async throws(StoreError) -> DevicePerson? {
        try await perform { conn in
            let rows = try await conn.query(
                "SELECT person, install_id, revoked_at FROM device_bindings WHERE subject = \(subject)", logger: self.logger
            ).decode((String?, String, Int64?).self)
            for try await (person, install, revoked) in rows {
                guard let id = UUID(wire: install) else { return nil }
                return DevicePerson(person: person, installId: id, revoked: revoked != nil)
            }
            return nil
        }
    }

    package func setDisplayName(person: String, name: String?, nowMillis: Int64) async throws(StoreError) {
        try await perform { conn in
            try await conn.query(
                """
                INSERT INTO people (person, display_name, updated_at) VALUES (\(person), \(name), \(nowMillis))
                ON CONFLICT (person) DO UPDATE SET display_name = excluded.display_name, updated_at = excluded.updated_at
                """, logger: self.logger)
        }
    }

    package func displayName(person: String) async throws(StoreError) -> String? {
        try await perform { conn in
            for try await name in try await conn.query(
                "SELECT display_name FROM people WHERE person = \(person)", logger: self.logger
            ).decode(String?.self) { return name }
            return nil
        }
    }

    package func createCircle(_ c: CircleRecord, owner: String, limits: CircleLimits) async throws(StoreError) -> Bool {
        try await transaction { conn in
            try await self.lock(conn, "person:" + owner)
            let n = try await self.count(conn, "SELECT COUNT(*)::BIGINT FROM circle_members WHERE person = \(owner)")
            guard n < limits.circlesPerPerson else { return false }
            try await conn.query(
                """
                INSERT INTO circles (id, name, created_by, created_at, version)
                VALUES (\(c.id), \(c.name), \(c.createdBy), \(c.createdMillis), \(c.version))
                """, logger: self.logger)
            try await conn.query(
                "INSERT INTO circle_members (circle_id, person, role, joined_at) VALUES (\(c.id), \(owner), 'owner', \(c.createdMillis))",
                logger: self.logger)
            return true
        }
    }

    package func circles(person: String?, limit: Int) async throws(StoreError) -> [CircleRecord] {
        try await perform { conn in
            let rows = try await conn.query(
                """
                SELECT id, name, created_by, created_at, version FROM circles
                WHERE \(person)::text IS NULL OR id IN (SELECT circle_id FROM circle_members WHERE person = \(person))
                ORDER BY created_at DESC, id LIMIT \(limit)
                """, logger: self.logger
            ).decode((String, String, String, Int64, Int64).self)
            var out: [CircleRecord] = []
            for try await (id, name, by, at, version) in rows {
                out.append(CircleRecord(id: id, name: name, createdBy: by, createdMillis: at, version: version))
            }
            return out
        }
    }

    package func circle(id: String) async throws(StoreError) -> CircleDetail? {
        try await perform { conn in
            var record: CircleRecord?
            for try await (cid, name, by, at, version) in try await conn.query(
                "SELECT id, name, created_by, created_at, version FROM circles WHERE id = \(id)", logger: self.logger
            ).decode((String, String, String, Int64, Int64).self) {
                record = CircleRecord(id: cid, name: name, createdBy: by, createdMillis: at, version: version)
            }
            guard let record else { return nil }
            var byPerson: [String: [UUID]] = [:]
            for try await (person, install) in try await conn.query(
                """
                SELECT b.person, b.install_id FROM device_bindings b JOIN circle_members m ON m.person = b.person
                WHERE m.circle_id = \(id) AND b.revoked_at IS NULL ORDER BY b.bound_at, b.install_id
                """, logger: self.logger
            ).decode((String, String).self) {
                guard let uuid = UUID(wire: install), !(byPerson[person]?.contains(uuid) ?? false) else { continue }
                byPerson[person, default: []].append(uuid)
            }
            var members: [CircleMember] = []
            for try await (person, display, role, joined, precision, hours, zone, paused) in try await conn.query(
                """
                SELECT m.person, p.display_name, m.role, m.joined_at, m.precision_m, m.hours, m.time_zone, m.paused_at
                FROM circle_members m LEFT JOIN people p ON p.person = m.person
                WHERE m.circle_id = \(id) ORDER BY m.joined_at, m.person
                """, logger: self.logger
            ).decode((String, String?, String, Int64, Double?, String?, String?, Int64?).self) {
                members.append(
                    CircleMember(
                        person: person, displayName: display, role: CircleRole(rawValue: role) ?? .member, joinedMillis: joined,
                        sharing: MemberSharing(precisionMeters: precision, hours: hours, timeZone: zone, pausedMillis: paused),
                        devices: byPerson[person] ?? []))
            }
            return CircleDetail(circle: record, members: members)
        }
    }

    package func deleteCircle(id: String) async throws(StoreError) -> Bool {
        try await transaction { conn in
            try await self.lock(conn, "circle:" + id)
            var n = 0
            for try await _ in try await conn.query("DELETE FROM circles WHERE id = \(id) RETURNING 1", logger: self.logger) { n += 1 }
            return n == 1
        }
    }

    package func insertInvitation(_ i: CircleInvitation, limits: CircleLimits, nowMillis: Int64) async throws(StoreError) -> Bool {
        try await transaction { conn in
            try await self.lock(conn, "circle:" + i.circleId)
            guard try await self.count(conn, "SELECT COUNT(*)::BIGINT FROM circles WHERE id = \(i.circleId)") == 1 else { return false }
            let open = try await self.count(
                conn,
                """
                SELECT COUNT(*)::BIGINT FROM circle_invitations
                WHERE circle_id = \(i.circleId) AND used_at IS NULL AND expires_at > \(nowMillis)
                """)
            guard open < limits.invitationsPerCircle else { return false }
            try await conn.query(
                """
                DELETE FROM circle_invitations WHERE circle_id = \(i.circleId) AND (used_at IS NOT NULL OR expires_at <= \(nowMillis))
                """, logger: self.logger)
            try await conn.query(
                """
                INSERT INTO circle_invitations (code_hash, circle_id, created_by, created_at, expires_at)
                VALUES (\(i.hash), \(i.circleId), \(i.createdBy), \(i.createdMillis), \(i.expiresMillis))
                """, logger: self.logger)
            return true
        }
    }

    package func acceptInvitation(hash: String, person: String, nowMillis: Int64, limits: CircleLimits) async throws(StoreError)
        -> CircleJoin
    {
        try await transaction { conn in
            var found: String?
            for try await c in try await conn.query(
                "SELECT circle_id FROM circle_invitations WHERE code_hash = \(hash)", logger: self.logger
            ).decode(String.self) { found = c }
            guard let circle = found else { return .invalid }
            // Circle first, then person (every path takes them in this order).
            try await self.lock(conn, "circle:" + circle)
            try await self.lock(conn, "person:" + person)
            let live = try await self.count(
                conn,
                """
                SELECT COUNT(*)::BIGINT FROM circle_invitations
                WHERE code_hash = \(hash) AND used_at IS NULL AND expires_at > \(nowMillis)
                """)
            guard live == 1 else { return .invalid }
            let isMember =
                try await self.count(
                    conn, "SELECT COUNT(*)::BIGINT FROM circle_members WHERE circle_id = \(circle) AND person = \(person)") > 0
            let members = try await self.count(conn, "SELECT COUNT(*)::BIGINT FROM circle_members WHERE circle_id = \(circle)")
            let mine = try await self.count(conn, "SELECT COUNT(*)::BIGINT FROM circle_members WHERE person = \(person)")
            let verdict = CircleRule.join(
                circleId: circle, isMember: isMember, members: members, circlesOfPerson: mine, limits: limits)
            guard case .joined = verdict else { return verdict }
            try await conn.query(
                "UPDATE circle_invitations SET used_at = \(nowMillis), used_by = \(person) WHERE code_hash = \(hash)", logger: self.logger)
            try await conn.query(
                "INSERT INTO circle_members (circle_id, person, role, joined_at) VALUES (\(circle), \(person), 'member', \(nowMillis))",
                logger: self.logger)
            try await conn.query("UPDATE circles SET version = version + 1 WHERE id = \(circle)", logger: self.logger)
            return verdict
        }
    }

    package func removeMember(circleId: String, person: String) async throws(StoreError) -> Bool {
        try await transaction { conn in
            try await self.lock(conn, "circle:" + circleId)
            var removed = 0
            for try await _ in try await conn.query(
                "DELETE FROM circle_members WHERE circle_id = \(circleId) AND person = \(person) RETURNING 1", logger: self.logger)
            { removed += 1 }
            guard removed == 1 else { return false }
            var left: [(String, String)] = []
            for try await row in try await conn.query(
                "SELECT person, role FROM circle_members WHERE circle_id = \(circleId) ORDER BY joined_at, person", logger: self.logger
            ).decode((String, String).self) { left.append(row) }
            guard let first = left.first else {
                try await conn.query("DELETE FROM circles WHERE id = \(circleId)", logger: self.logger)
                return true
            }
            if !left.contains(where: { $0.1 == CircleRole.owner.rawValue }) {
                try await conn.query(
                    "UPDATE circle_members SET role = 'owner' WHERE circle_id = \(circleId) AND person = \(first.0)", logger: self.logger)
            }
            try await conn.query("UPDATE circles SET version = version + 1 WHERE id = \(circleId)", logger: self.logger)
            return true
        }
    }

    package func setSharing(circleId: String, person: String, sharing s: MemberSharing) async throws(StoreError) -> Bool {
        try await transaction { conn in
            var n = 0
            for try await _ in try await conn.query(
                """
                UPDATE circle_members SET precision_m = \(s.precisionMeters), hours = \(s.hours), time_zone = \(s.timeZone),
                    paused_at = \(s.pausedMillis)
                WHERE circle_id = \(circleId) AND person = \(person) RETURNING 1
                """, logger: self.logger)
            { n += 1 }
            guard n == 1 else { return false }
            try await conn.query("UPDATE circles SET version = version + 1 WHERE id = \(circleId)", logger: self.logger)
            return true
        }
    }

    package func circleVersion(id: String) async throws(StoreError) -> Int64? {
        try await perform { conn in
            for try await v in try await conn.query("SELECT version FROM circles WHERE id = \(id)", logger: self.logger).decode(Int64.self)
            {
                return v
            }
            return nil
        }
    }

    package func latestLocateRequest(installId: UUID, requestedBy: String) async throws(StoreError) -> LocateRequest? {
        try await perform { conn in
            try await self.fetchLocates(
                conn,
                """
                SELECT \(unescaped: Self.locateColumns) FROM locate_requests
                WHERE install_id = \(installId) AND requested_by = \(requestedBy) ORDER BY created_at DESC, id DESC LIMIT 1
                """
            ).first
        }
    }
}
