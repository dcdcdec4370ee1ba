import BeekonWire
import Foundation

/// A circle (issue 52): people who see each other on a live map. A person is the `person`
/// string of the enrolment codes their installs were enrolled with; every member decides for
/// themself what the others see of them (``MemberSharing``).
package struct CircleRecord: Sendable, Equatable {
    /// Public id (`cir_` + 24 hex digits).
    package var id: String
    /// Its name, 1…``CircleLimits/nameBytes`` bytes.
    package var name: String
    /// The person who created it.
    package var createdBy: String
    /// When it was created (Unix ms).
    package var createdMillis: Int64
    /// Bumped by every change of its members or their sharing: an open live stream of the
    /// circle ends when it changes (its viewer reconnects with the new rules).
    package var version: Int64

    /// Creates a record.
    package init(id: String, name: String, createdBy: String, createdMillis: Int64, version: Int64 = 1) {
        self.id = id
        self.name = name
        self.createdBy = createdBy
        self.createdMillis = createdMillis
        self.version = version
    }
}

/// What one member lets the other members see of them: their positions at a precision, in
/// hours of the day, or nothing while paused. Checked like a share's scope (``ShareScope``).
package struct MemberSharing: Sendable, Equatable {
    /// Positions coarsened to this many metres; nil for full precision.
    package var precisionMeters: Double?
    /// Hours of the day (`HH:MM-HH:MM` in `timeZone`); nil for all day.
    package var hours: String?
    /// The IANA time zone of `hours`.
    package var timeZone: String?
    /// When the member paused sharing (Unix ms); nil while sharing.
    package var pausedMillis: Int64?

    /// Creates a setting (default: everything, all day).
    package init(precisionMeters: Double? = nil, hours: String? = nil, timeZone: String? = nil, pausedMillis: Int64? = nil) {
        self.precisionMeters = precisionMeters
        self.hours = hours
        self.timeZone = timeZone
        self.pausedMillis = pausedMillis
    }

    /// The rules another member's view applies to this member's devices: the share scope's
    /// keys (one implementation of precision and hours), live, no history bound.
    var scope: ShareScope { ShareScope(live: true, precisionMeters: precisionMeters, hours: hours, timeZone: timeZone) }
}

/// A member's role.
package enum CircleRole: String, Sendable, Equatable, Codable {
    /// Invites, removes members, deletes the circle.
    case owner
    /// Sees the others and is seen.
    case member
}

/// One member as stored, with the installs bound to them.
package struct CircleMember: Sendable, Equatable {
    /// The person.
    package var person: String
    /// The name the person set for themself (nil: none).
    package var displayName: String?
    /// Owner or member.
    package var role: CircleRole
    /// When they joined (Unix ms).
    package var joinedMillis: Int64
    /// What they let the others see.
    package var sharing: MemberSharing
    /// Their installs: bound to them by an enrolment code for the person, not revoked.
    package var devices: [UUID]

    /// Creates a member.
    package init(
        person: String, displayName: String?, role: CircleRole, joinedMillis: Int64, sharing: MemberSharing = MemberSharing(),
        devices: [UUID] = []
    ) {
        self.person = person
        self.displayName = displayName
        self.role = role
        self.joinedMillis = joinedMillis
        self.sharing = sharing
        self.devices = devices
    }
}

/// A circle with its members, oldest member first.
package struct CircleDetail: Sendable, Equatable {
    /// The circle.
    package var circle: CircleRecord
    /// Its members.
    package var members: [CircleMember]

    /// Creates a detail.
    package init(circle: CircleRecord, members: [CircleMember]) {
        self.circle = circle
        self.members = members
    }

    /// The member `person`, if they are one.
    package func member(_ person: String) -> CircleMember? { members.first { $0.person == person } }
}

/// An invitation as stored: a one-use code (only its hash) a person accepts before it expires.
package struct CircleInvitation: Sendable, Equatable {
    /// SHA-256 of the code, hex.
    package var hash: String
    /// The circle it joins.
    package var circleId: String
    /// Who created it (a person, or `admin`).
    package var createdBy: String
    /// Creation and expiry time (Unix ms).
    package var createdMillis: Int64, expiresMillis: Int64

    /// Creates an invitation.
    package init(hash: String, circleId: String, createdBy: String, createdMillis: Int64, expiresMillis: Int64) {
        self.hash = hash
        self.circleId = circleId
        self.createdBy = createdBy
        self.createdMillis = createdMillis
        self.expiresMillis = expiresMillis
    }

    /// Its public id: `inv_` and the first 96 bits of its hash.
    package var id: String { "inv_" + hash.prefix(24) }
}

/// The bounds on circles (issue 52: every list and every name is bounded).
package struct CircleLimits: Sendable, Equatable {
    /// Members of one circle at most.
    package var membersPerCircle = 50
    /// Circles one person belongs to at most.
    package var circlesPerPerson = 20
    /// Unused, unexpired invitations of one circle at most.
    package var invitationsPerCircle = 20
    /// A circle's name and a display name: at most this many bytes of UTF-8.
    package static let nameBytes = 100
    /// An invitation's lifetime: 60 s … 30 days (default 7 days).
    package static let invitationTTL = 60...(30 * 86_400)

    /// Creates the default bounds.
    package init() {}
}

/// The outcome of accepting an invitation.
package enum CircleJoin: Sendable, Equatable {
    /// Joined the circle with this id.
    case joined(String)
    /// Already a member of it: the invitation is left unused.
    case alreadyMember(String)
    /// Unknown, expired or used.
    case invalid
    /// The circle holds ``CircleLimits/membersPerCircle`` members.
    case circleFull
    /// The person belongs to ``CircleLimits/circlesPerPerson`` circles.
    case tooManyCircles
}

/// The person a device credential acts for (issue 52), from the binding of its subject.
package struct DevicePerson: Sendable, Equatable {
    /// The person of the enrolment code that bound it; nil for a credential of nobody.
    package var person: String?
    /// The install it is bound to.
    package var installId: UUID
    /// Revoked by an admin.
    package var revoked: Bool

    /// Creates a binding's person.
    package init(person: String?, installId: UUID, revoked: Bool) {
        self.person = person
        self.installId = installId
        self.revoked = revoked
    }
}

/// Persistence of people and circles (issue 52), on both stores.
package protocol CircleStore: Sendable {
    /// The person behind a device credential's subject (nil: no binding).
    func devicePerson(subject: String) async throws(StoreError) -> DevicePerson?
    /// Sets (nil: clears) the name a person shows in their circles.
    func setDisplayName(person: String, name: String?, nowMillis: Int64) async throws(StoreError)
    /// The name a person set.
    func displayName(person: String) async throws(StoreError) -> String?
    /// Stores a new circle with `owner` as its owner; false when the owner belongs to
    /// ``CircleLimits/circlesPerPerson`` circles already.
    func createCircle(_ circle: CircleRecord, owner: String, limits: CircleLimits) async throws(StoreError) -> Bool
    /// The circles of `person` (nil: every circle), newest first, at most `limit`.
    func circles(person: String?, limit: Int) async throws(StoreError) -> [CircleRecord]
    /// A circle with its members and their devices.
    func circle(id: String) async throws(StoreError) -> CircleDetail?
    /// Deletes a circle, its members and invitations; false when there is none.
    func deleteCircle(id: String) async throws(StoreError) -> Bool
    /// Stores an invitation; false when the circle has ``CircleLimits/invitationsPerCircle``
    /// unused, unexpired ones (or no longer exists).
    func insertInvitation(_ invitation: CircleInvitation, limits: CircleLimits, nowMillis: Int64) async throws(StoreError) -> Bool
    /// Spends an invitation for `person`, atomically, within the bounds.
    func acceptInvitation(hash: String, person: String, nowMillis: Int64, limits: CircleLimits) async throws(StoreError) -> CircleJoin
    /// Removes a member (leaving, or removed); the longest-standing member becomes owner when
    /// the last owner goes, and the circle is deleted with its last member. False when
    /// `person` was no member.
    func removeMember(circleId: String, person: String) async throws(StoreError) -> Bool
    /// Replaces a member's sharing; false when `person` is no member.
    func setSharing(circleId: String, person: String, sharing: MemberSharing) async throws(StoreError) -> Bool
    /// The circle's version (nil: it no longer exists).
    func circleVersion(id: String) async throws(StoreError) -> Int64?
    /// The newest locate request of a device made by `requestedBy` (a circle's wake-ups).
    func latestLocateRequest(installId: UUID, requestedBy: String) async throws(StoreError) -> LocateRequest?
}

/// The joining rule both stores apply (issue 52), given what they read in one transaction.
package enum CircleRule {
    /// What accepting a live invitation of `circleId` does for a person who is (or is not)
    /// a member, with the circle's member count and the person's circle count.
    package static func join(circleId: String, isMember: Bool, members: Int, circlesOfPerson: Int, limits: CircleLimits) -> CircleJoin {
        if isMember { return .alreadyMember(circleId) }
        if members >= limits.membersPerCircle { return .circleFull }
        if circlesOfPerson >= limits.circlesPerPerson { return .tooManyCircles }
        return .joined(circleId)
    }
}
