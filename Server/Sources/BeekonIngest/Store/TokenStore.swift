import Foundation

/// Persistence for the token endpoint: the access-token signing key and the
/// refresh-token chain. Kept in the database so that several server instances
/// share both.
package protocol TokenStore: Sendable {
    /// Returns the signing key, creating it on first use (the first instance wins).
    func signingKey(proposed: [UInt8]) async throws(StoreError) -> [UInt8]
    /// Records a freshly issued refresh token (start of a new family).
    func insertRefreshToken(_ record: RefreshTokenRecord) async throws(StoreError)
    /// Rotates a presented refresh token into `replacement`, atomically, by the rule of
    /// ``RefreshSuccessor/verdict(revoked:rotatedMillis:successor:nowMillis:windowMillis:)``:
    /// a superseded token may be presented again within `replayWindowMillis` of its first
    /// rotation while its successor is unused (a lost answer); any other retired token revokes
    /// its chain.
    func rotateRefreshToken(presentedHash: String, replacement: RefreshTokenRecord, nowMillis: Int64, replayWindowMillis: Int64)
        async throws(StoreError) -> RefreshRotation
    /// The install a device credential (`subject`) is bound to. A subject without a binding is
    /// bound to `claim` now (first use, for tokens issued without `--install-id`); the answer is
    /// always the binding as stored, so a second install claimed later loses.
    func deviceBinding(subject: String, claim: UUID, nowMillis: Int64) async throws(StoreError) -> DeviceBinding
    /// Revokes every credential bound to `installId` (bindings and their refresh tokens); an
    /// install never enrolled is recorded as revoked so it cannot be enrolled later. Returns how
    /// many credentials were revoked.
    func revokeDevice(installId: UUID, nowMillis: Int64) async throws(StoreError) -> Int
    /// Records a new enrollment code (only its hash).
    func insertEnrollmentCode(_ code: EnrollmentCodeRecord) async throws(StoreError)
    /// Spends one use of an enrollment code for `installId`, atomically, by the rule of
    /// ``EnrollmentRule``: binds the install's subject (its `install_id` text) and stores
    /// `refresh` as the first token of a new chain; a re-enrolment retires the install's
    /// other refresh tokens.
    func redeemEnrollmentCode(hash: String, installId: UUID, refresh: RefreshTokenRecord, nowMillis: Int64)
        async throws(StoreError) -> EnrollmentRedemption
    /// The enrollment codes, newest first (at most `limit`), with how many installs each enrolled.
    func enrollmentCodes(limit: Int) async throws(StoreError) -> [EnrollmentCodeListing]
    /// Revokes the code whose id (``EnrollmentCodeRecord/id``) is `id`; false when there is no
    /// such code or it was revoked already. Installs it enrolled keep their credentials.
    func revokeEnrollmentCode(id: String, nowMillis: Int64) async throws(StoreError) -> Bool
}

/// The install a device credential acts for, and whether an admin revoked it.
package struct DeviceBinding: Sendable, Equatable {
    /// The only install the credential may upload for, poll commands of, or answer for.
    package var installId: UUID
    /// Revoked by an admin: its tokens no longer work.
    package var revoked: Bool

    /// Creates a binding.
    package init(installId: UUID, revoked: Bool) {
        self.installId = installId
        self.revoked = revoked
    }

    /// What an unbound credential's first use gets when it claims an install that another
    /// credential already holds (XR-2): bound to no install (the nil UUID, which no device
    /// has), so every request for the claimed install is refused as another install's, and
    /// the credential stays free to bind to an install nobody holds.
    package static let heldByAnother = DeviceBinding(
        installId: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), revoked: false)

    /// The first-use answer when no binding of `subject` was stored: `claim` was revoked by an
    /// admin (`revokedClaim` true: the credential is refused as revoked), or another credential
    /// holds it.
    package static func refused(claim: UUID, revokedClaim: Bool) -> DeviceBinding {
        revokedClaim ? DeviceBinding(installId: claim, revoked: true) : heldByAnother
    }
}

/// An enrollment code as stored: a device exchanges it for tokens bound to its install.
package struct EnrollmentCodeRecord: Sendable, Equatable {
    /// SHA-256 of the code, hex.
    package var hash: String
    /// The creator's note (e.g. the app or fleet it is for).
    package var label: String?
    /// Creation and expiry time, Unix ms.
    package var createdMillis: Int64, expiresMillis: Int64
    /// How many installs may still enrol with it (1 for a one-device code; unused by a fleet code).
    package var usesLeft: Int
    /// The person the code is for (issue 52): an install it enrols is that person's, and may
    /// re-enrol later with another code for the same person. Nil: nobody's (a fleet code).
    package var person: String?
    /// A fleet code (issue 52): at most this many installs per rolling hour, no total.
    package var perHour: Int?
    /// Who created it: `admin` or `enroller`.
    package var createdBy: String

    /// Creates a record.
    package init(
        hash: String, label: String?, createdMillis: Int64, expiresMillis: Int64, usesLeft: Int, person: String? = nil,
        perHour: Int? = nil, createdBy: String = "admin"
    ) {
        self.hash = hash
        self.label = label
        self.createdMillis = createdMillis
        self.expiresMillis = expiresMillis
        self.usesLeft = usesLeft
        self.person = person
        self.perHour = perHour
        self.createdBy = createdBy
    }

    /// The code's public id, for listing and revoking: the first 96 bits of its hash (the code
    /// itself is shown once, never stored).
    package var id: String { Self.id(hash: hash) }

    /// The public id of the code whose SHA-256 (hex) is `hash`.
    package static func id(hash: String) -> String { "enr_" + hash.prefix(24) }
}

/// One enrollment code as an admin lists it (never the code itself).
package struct EnrollmentCodeListing: Sendable, Equatable {
    /// The code as stored.
    package var record: EnrollmentCodeRecord
    /// When an admin revoked it, Unix ms.
    package var revokedMillis: Int64?
    /// How many installs it enrolled (re-enrolments included).
    package var enrolled: Int

    /// Creates a listing.
    package init(record: EnrollmentCodeRecord, revokedMillis: Int64?, enrolled: Int) {
        self.record = record
        self.revokedMillis = revokedMillis
        self.enrolled = enrolled
    }
}

/// The result of presenting an enrollment code.
package enum EnrollmentRedemption: Sendable, Equatable {
    /// Spent; the install is bound and the refresh token stored.
    case enrolled
    /// Spent by an install already enrolled for the code's person: its other credentials are retired.
    case reenrolled
    /// Unknown, expired, revoked or used up.
    case invalidCode
    /// The install is held by another credential, or known to the server and the code is
    /// bound to no person (issue 52: a fleet code cannot claim an install it learned of).
    case installTaken
    /// The install was revoked by an admin.
    case installRevoked
    /// A fleet code's hourly allowance is spent: a use frees up in this many ms.
    case rateLimited(retryAfterMillis: Int64)
}

/// The enrollment rule both stores apply (issue 52), given what they read in one transaction.
package enum EnrollmentRule {
    /// What the store knows of the install a code is presented for.
    package struct Install: Sendable, Equatable {
        /// The person of each credential bound to the install (nil: bound to nobody).
        package var holders: [String?]
        /// Whether any credential of the install was revoked by an admin.
        package var revoked: Bool
        /// Whether the server has history of the install (any batch).
        package var hasHistory: Bool

        /// Creates an install's state.
        package init(holders: [String?], revoked: Bool, hasHistory: Bool) {
            self.holders = holders
            self.revoked = revoked
            self.hasHistory = hasHistory
        }
    }

    /// What presenting a live code for an install does.
    package enum Verdict: Sendable, Equatable {
        /// A new install: bind it.
        case enrol
        /// The code's person already holds the install (a restored phone, a long-idle app):
        /// retire its credentials and start a new chain.
        case reenrol
        /// Refused, with this answer.
        case refuse(EnrollmentRedemption)
    }

    /// The rule: a revoked install stays revoked; a held install re-enrols only with a code for
    /// the person every credential of it belongs to; an install the server knows (it has
    /// history) but nobody holds is claimed only by a code bound to a person, whom the app's
    /// backend vouched for; anything else is a new install.
    package static func verdict(codePerson: String?, install: Install) -> Verdict {
        if install.revoked { return .refuse(.installRevoked) }
        if !install.holders.isEmpty {
            guard let codePerson, install.holders.allSatisfy({ $0 == codePerson }) else { return .refuse(.installTaken) }
            return .reenrol
        }
        if install.hasHistory && codePerson == nil { return .refuse(.installTaken) }
        return .enrol
    }

    /// For a fleet code with `perHour` uses an hour, given the binding times of the installs it
    /// enrolled in the last hour (ascending): nil when a use is free, else the ms until one is.
    package static func retryAfter(perHour: Int, recentBindings: [Int64], nowMillis: Int64) -> Int64? {
        guard recentBindings.count >= perHour else { return nil }
        let freesAt = recentBindings[recentBindings.count - perHour] + hourMillis
        return max(freesAt - nowMillis, 1)
    }

    /// A fleet code's window.
    package static let hourMillis: Int64 = 3_600_000
}

/// One refresh token as stored (only its hash is kept).
package struct RefreshTokenRecord: Sendable, Equatable {
    /// SHA-256 of the token, hex.
    package var hash: String
    /// The device / principal it was issued to.
    package var subject: String
    /// The chain it belongs to (all rotations of one grant).
    package var family: String
    /// Issue and expiry time, Unix ms.
    package var issuedMillis: Int64, expiresMillis: Int64

    /// Creates a record.
    package init(hash: String, subject: String, family: String, issuedMillis: Int64, expiresMillis: Int64) {
        self.hash = hash
        self.subject = subject
        self.family = family
        self.issuedMillis = issuedMillis
        self.expiresMillis = expiresMillis
    }
}

/// The result of presenting a refresh token.
package enum RefreshRotation: Sendable, Equatable {
    /// Rotated; the replacement was stored for `subject`.
    case rotated(subject: String)
    /// Unknown, expired or revoked token.
    case invalid
    /// A retired token (superseded past its replay window, an answer a replay retired, or
    /// revoked): the whole family is now revoked.
    case reused
}

/// What a presented refresh token's successor looks like, and the rule both stores apply to it
/// (issue 52): reuse detection that cannot be turned against the token's holder.
package struct RefreshSuccessor: Sendable, Equatable {
    /// The successor was itself rotated (its holder used it).
    package var used: Bool
    /// The successor was retired (by a replay of its predecessor, or with its chain).
    package var revoked: Bool
    /// When the successor was issued, Unix ms.
    package var issuedMillis: Int64

    /// Creates a successor's state.
    package init(used: Bool, revoked: Bool, issuedMillis: Int64) {
        self.used = used
        self.revoked = revoked
        self.issuedMillis = issuedMillis
    }

    /// What presenting a live (known, unexpired) refresh token does.
    package enum Verdict: Sendable, Equatable {
        /// The token is current: rotate it.
        case rotate
        /// The answer to its rotation may have been lost: retire the successor and rotate again.
        case replay
        /// Reuse: revoke the whole chain, so a stolen token stops working for both parties.
        case revokeFamily
    }

    /// The rule: a revoked token (an answer a replay retired, or a revoked chain) revokes the
    /// chain; a current token rotates; a superseded one is a lost answer only while its
    /// successor is unused and live and its first rotation (`rotatedMillis`, else the
    /// successor's issue time) is at most `windowMillis` old. Everything else is reuse. So an
    /// attacker's replay of a stolen, superseded token retires the holder's successor, whose
    /// next presentation ends the attacker's chain as well; and each replay retires the answer
    /// before it, so of two parties replaying one token, the one left holding a retired answer
    /// ends the chain for both. The window does not slide with replays.
    package static func verdict(
        revoked: Bool, rotatedMillis: Int64?, successor: RefreshSuccessor?, nowMillis: Int64, windowMillis: Int64
    ) -> Verdict {
        if revoked { return .revokeFamily }
        guard let successor else { return .rotate }
        let rotated = rotatedMillis ?? successor.issuedMillis
        let lostAnswer = !successor.used && !successor.revoked && nowMillis - rotated <= windowMillis
        return lostAnswer ? .replay : .revokeFamily
    }
}
