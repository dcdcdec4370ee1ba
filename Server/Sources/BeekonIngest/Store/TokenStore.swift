import Foundation

/// Persistence for the token endpoint: the access-token signing key and the
/// refresh-token chain. Kept in the database so that several server instances
/// share both.
package protocol TokenStore: Sendable {
    /// Returns the signing key, creating it on first use (the first instance wins).
    func signingKey(proposed: [UInt8]) async throws(StoreError) -> [UInt8]
    /// Records a freshly issued refresh token (start of a new family).
    func insertRefreshToken(_ record: RefreshTokenRecord) async throws(StoreError)
    /// Rotates a presented refresh token into `replacement`, atomically.
    func rotateRefreshToken(presentedHash: String, replacement: RefreshTokenRecord, nowMillis: Int64) async throws(StoreError)
        -> RefreshRotation
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
    /// Spends one use of an enrollment code for `installId`, atomically: binds the install's
    /// subject (its `install_id` text) and stores `refresh` as the first token of its chain.
    func redeemEnrollmentCode(hash: String, installId: UUID, refresh: RefreshTokenRecord, nowMillis: Int64)
        async throws(StoreError) -> EnrollmentRedemption
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
    /// The admin's note (e.g. the app or fleet it is for).
    package var label: String?
    /// Creation and expiry time, Unix ms.
    package var createdMillis: Int64, expiresMillis: Int64
    /// How many installs may still enrol with it (1 for a one-device code).
    package var usesLeft: Int

    /// Creates a record.
    package init(hash: String, label: String?, createdMillis: Int64, expiresMillis: Int64, usesLeft: Int) {
        self.hash = hash
        self.label = label
        self.createdMillis = createdMillis
        self.expiresMillis = expiresMillis
        self.usesLeft = usesLeft
    }
}

/// The result of presenting an enrollment code.
package enum EnrollmentRedemption: Sendable, Equatable {
    /// Spent; the install is bound and the refresh token stored.
    case enrolled
    /// Unknown, expired or used up.
    case invalidCode
    /// The install already has a credential (enrol once; revoke and use a new install id to start over).
    case installTaken
    /// The install was revoked by an admin.
    case installRevoked
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
    /// A token whose successor was already used: the whole family is now revoked.
    case reused
}
