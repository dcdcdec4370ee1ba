import BeekonIngest
import BeekonWire
import Foundation
import Testing

extension Ingest {
    /// The `CircleStore` contract (issue 52), identical on SQLite and PostgreSQL: the bounds,
    /// one-use invitations, ownership passing on, versions, and the installs of a person.
    @Suite struct CircleStoreContract {
        static let now = Fixtures.base + 3_600_000

        static func record(_ owner: String, at millis: Int64 = now) -> CircleRecord {
            CircleRecord(
                id: "cir_" + String(format: "%024x", Int.random(in: 0...Int.max)), name: "c", createdBy: owner, createdMillis: millis)
        }

        static func invitation(_ circle: String, expires: Int64 = now + 60_000) -> CircleInvitation {
            CircleInvitation(
                hash: String(format: "%064x", Int.random(in: 0...Int.max)), circleId: circle, createdBy: "alice", createdMillis: now,
                expiresMillis: expires)
        }

        @Test("issue 52: invitations are one-use, expire, and join within the members and circles bounds", arguments: Backend.all)
        func invitationsAndBounds(_ backend: Backend) async throws {
            try await withStore(backend) { (store: any LocationStore) async throws -> Void in
                let s = store.circles
                var limits = CircleLimits()
                limits.membersPerCircle = 3
                limits.circlesPerPerson = 2
                limits.invitationsPerCircle = 2
                let c = Self.record("alice")
                #expect(try await s.createCircle(c, owner: "alice", limits: limits))
                let one = Self.invitation(c.id)
                #expect(try await s.insertInvitation(one, limits: limits, nowMillis: Self.now))
                #expect(try await s.acceptInvitation(hash: one.hash, person: "bob", nowMillis: Self.now, limits: limits) == .joined(c.id))
                #expect(try await s.acceptInvitation(hash: one.hash, person: "carol", nowMillis: Self.now, limits: limits) == .invalid)
                // Already a member: the invitation stays unused for someone else.
                let two = Self.invitation(c.id)
                #expect(try await s.insertInvitation(two, limits: limits, nowMillis: Self.now))
                #expect(
                    try await s.acceptInvitation(hash: two.hash, person: "bob", nowMillis: Self.now, limits: limits) == .alreadyMember(c.id)
                )
                // Two unused (two, three) is the bound; a used or expired one frees a place.
                let three = Self.invitation(c.id, expires: Self.now + 1_000)
                #expect(try await s.insertInvitation(three, limits: limits, nowMillis: Self.now))
                #expect(try await s.insertInvitation(Self.invitation(c.id), limits: limits, nowMillis: Self.now) == false)
                #expect(
                    try await s.acceptInvitation(hash: three.hash, person: "dan", nowMillis: Self.now + 1_000, limits: limits) == .invalid)
                #expect(try await s.insertInvitation(Self.invitation(c.id), limits: limits, nowMillis: Self.now + 1_000))
                #expect(try await s.acceptInvitation(hash: two.hash, person: "carol", nowMillis: Self.now, limits: limits) == .joined(c.id))
                // Full at 3 members.
                #expect(try await s.circle(id: c.id)?.members.map(\.person) == ["alice", "bob", "carol"])
                let four = Self.invitation(c.id)
                #expect(try await s.insertInvitation(four, limits: limits, nowMillis: Self.now))
                #expect(try await s.acceptInvitation(hash: four.hash, person: "frank", nowMillis: Self.now, limits: limits) == .circleFull)
                // Circles per person: alice owns one, joins a second, and can make or join no third.
                let d = Self.record("erin")
                #expect(try await s.createCircle(d, owner: "erin", limits: limits))
                let toD = Self.invitation(d.id)
                #expect(try await s.insertInvitation(toD, limits: limits, nowMillis: Self.now))
                #expect(try await s.acceptInvitation(hash: toD.hash, person: "alice", nowMillis: Self.now, limits: limits) == .joined(d.id))
                #expect(try await s.createCircle(Self.record("alice"), owner: "alice", limits: limits) == false)
                let e = Self.record("gina")
                #expect(try await s.createCircle(e, owner: "gina", limits: limits))
                let toE = Self.invitation(e.id)
                #expect(try await s.insertInvitation(toE, limits: limits, nowMillis: Self.now))
                #expect(
                    try await s.acceptInvitation(hash: toE.hash, person: "alice", nowMillis: Self.now, limits: limits) == .tooManyCircles)
                #expect(try await s.circles(person: "alice", limit: 10).count == 2)
                #expect(try await s.circles(person: nil, limit: 1).count == 1)
            }
        }

        @Test("issue 52: a burst of joins never passes the members bound", arguments: Backend.all)
        func concurrentJoinsStayWithinTheBound(_ backend: Backend) async throws {
            try await withStore(backend) { (store: any LocationStore) async throws -> Void in
                let s = store.circles
                var bounds = CircleLimits()
                bounds.membersPerCircle = 4
                bounds.invitationsPerCircle = 20
                let limits = bounds
                let c = Self.record("alice")
                #expect(try await s.createCircle(c, owner: "alice", limits: limits))
                var codes: [CircleInvitation] = []
                for _ in 0..<12 {
                    let i = Self.invitation(c.id)
                    #expect(try await s.insertInvitation(i, limits: limits, nowMillis: Self.now))
                    codes.append(i)
                }
                let outcomes = try await withThrowingTaskGroup(of: CircleJoin.self) { group in
                    for (n, i) in codes.enumerated() {
                        group.addTask { try await s.acceptInvitation(hash: i.hash, person: "p\(n)", nowMillis: Self.now, limits: limits) }
                    }
                    return try await group.reduce(into: [CircleJoin]()) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 == .joined(c.id) }.count == 3)
                #expect(outcomes.filter { $0 == .circleFull }.count == 9)
                #expect(try await s.circle(id: c.id)?.members.count == 4)
            }
        }

        @Test(
            "issue 52: leaving passes ownership on, the last member's leaving deletes; every change bumps the version",
            arguments: Backend.all)
        func membershipAndVersions(_ backend: Backend) async throws {
            try await withStore(backend) { (store: any LocationStore) async throws -> Void in
                let s = store.circles
                let limits = CircleLimits()
                let c = Self.record("alice")
                #expect(try await s.createCircle(c, owner: "alice", limits: limits))
                var version = try #require(try await s.circleVersion(id: c.id))
                func bumped() async throws -> Bool {
                    let now = try #require(try await s.circleVersion(id: c.id))
                    defer { version = now }
                    return now > version
                }
                for (n, person) in ["bob", "carol"].enumerated() {
                    let i = Self.invitation(c.id)
                    #expect(try await s.insertInvitation(i, limits: limits, nowMillis: Self.now))
                    #expect(
                        try await s.acceptInvitation(hash: i.hash, person: person, nowMillis: Self.now + Int64(n + 1), limits: limits)
                            == .joined(c.id))
                    #expect(try await bumped(), "a join")
                }
                let sharing = MemberSharing(precisionMeters: 500, hours: "07:00-19:00", timeZone: "Europe/Berlin", pausedMillis: Self.now)
                #expect(try await s.setSharing(circleId: c.id, person: "bob", sharing: sharing))
                #expect(try await bumped(), "a change of sharing")
                #expect(try await s.circle(id: c.id)?.member("bob")?.sharing == sharing)
                #expect(try await s.setSharing(circleId: c.id, person: "zed", sharing: sharing) == false)
                #expect(try await s.removeMember(circleId: c.id, person: "alice"))
                #expect(try await bumped(), "a leave")
                let left = try #require(try await s.circle(id: c.id))
                #expect(left.members.map(\.person) == ["bob", "carol"])
                #expect(left.member("bob")?.role == .owner, "the longest-standing member owns it now")
                #expect(try await s.removeMember(circleId: c.id, person: "alice") == false)
                #expect(try await s.removeMember(circleId: c.id, person: "bob"))
                #expect(try await s.removeMember(circleId: c.id, person: "carol"))
                #expect(try await s.circle(id: c.id) == nil, "the last member's leaving deletes the circle")
                #expect(try await s.circleVersion(id: c.id) == nil)
                let gone = Self.record("dan")
                #expect(try await s.createCircle(gone, owner: "dan", limits: limits))
                #expect(try await s.deleteCircle(id: gone.id))
                #expect(try await s.deleteCircle(id: gone.id) == false)
                try await s.setDisplayName(person: "dan", name: "Dan", nowMillis: Self.now)
                #expect(try await s.displayName(person: "dan") == "Dan")
                try await s.setDisplayName(person: "dan", name: nil, nowMillis: Self.now)
                #expect(try await s.displayName(person: "dan") == nil)
            }
        }

        @Test("issue 52: a person's installs are those enrolled with codes for them and not revoked", arguments: Backend.all)
        func personsDevices(_ backend: Backend) async throws {
            try await withStore(backend) { (store: any LocationStore) async throws -> Void in
                let tokens = TokenService(store: store.tokens, accessTTLSeconds: 900, refreshTTLSeconds: 3600)
                try await tokens.loadKey()
                let phone = Fixtures.ids.next()
                let tablet = Fixtures.ids.next()
                let other = Fixtures.ids.next()
                for (install, person) in [(phone, "alice"), (tablet, "alice"), (other, nil)] as [(UUID, String?)] {
                    let code = try await tokens.createEnrollmentCode(uses: 1, ttlSeconds: 3600, label: nil, person: person)
                    _ = try await tokens.enroll(code: code.code, installId: install)
                }
                let c = Self.record("alice")
                #expect(try await store.circles.createCircle(c, owner: "alice", limits: CircleLimits()))
                #expect(
                    try await store.circles.circle(id: c.id)?.member("alice")?.devices.sorted { $0.wireString < $1.wireString }
                        == [phone, tablet].sorted { $0.wireString < $1.wireString })
                #expect(
                    try await store.circles.devicePerson(subject: phone.wireString)
                        == DevicePerson(person: "alice", installId: phone, revoked: false))
                #expect(try await store.circles.devicePerson(subject: other.wireString)?.person == nil)
                #expect(try await store.circles.devicePerson(subject: "nobody") == nil)
                _ = try await tokens.revoke(installId: tablet)
                #expect(try await store.circles.circle(id: c.id)?.member("alice")?.devices == [phone])
                #expect(try await store.circles.devicePerson(subject: tablet.wireString)?.revoked == true)
            }
        }
    }
}
