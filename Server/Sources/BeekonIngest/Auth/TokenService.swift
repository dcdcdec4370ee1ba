import BeekonPrimitives
import BeekonWire
import Crypto
import Foundation
import Logging

/// Issues access tokens and rotating refresh tokens, in the response shape the
/// SDK's `AuthConfig` reads (`access_token`, `refresh_token`, `expires_in`).
///
/// Rotation: each refresh returns a new refresh token and retires the old one.
/// If the answer to a refresh is lost, the device may present the old token
/// again within ``replayWindowSeconds`` of its rotation, while the new one was never
/// used; that retires the new one. Presenting any other retired token revokes the
/// whole chain (token theft), so a stolen token stops working for both parties (issue 52).
package final class TokenService: Sendable {
    let store: any TokenStore
    let accessTTL: Int64
    let refreshTTL: Int64
    let now: @Sendable () -> Date
    /// A new refresh-token family's id (injected in tests; UUIDv7 on the service's clock by default).
    let makeFamilyID: @Sendable () -> UUID
    private let signerBox = Locked<AccessTokenSigner?>(nil)
    /// How long after a rotation its answer may be taken as lost: the superseded token may be
    /// presented again within this many seconds of its first rotation.
    package static let replayWindowSeconds = 120

    /// Creates the service; call `loadKey()` after migrations before serving. `makeFamilyID`
    /// names each new refresh-token chain (default: UUIDv7 ids on `now`).
    package init(
        store: any TokenStore, accessTTLSeconds: Int, refreshTTLSeconds: Int, now: @escaping @Sendable () -> Date = { Date() },
        makeFamilyID: (@Sendable () -> UUID)? = nil
    ) {
        self.store = store
        self.accessTTL = Int64(accessTTLSeconds)
        self.refreshTTL = Int64(refreshTTLSeconds)
        self.now = now
        let ids = UUIDv7Generator(now: now)
        self.makeFamilyID = makeFamilyID ?? { ids.next() }
    }

    /// Loads (or creates) the shared signing key from the store.
    package func loadKey() async throws(StoreError) {
        let proposed = SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) }
        let key = try await store.signingKey(proposed: proposed)
        signerBox.value = AccessTokenSigner(key: key)
    }

    /// The opaque event ids of shares' live streams (``LiveEventIDs``), keyed by the signing
    /// key; nil before `loadKey()`.
    func liveEventIDs() -> LiveEventIDs? {
        signerBox.value.map { LiveEventIDs(key: $0.derivedKey(label: LiveEventIDs.keyLabel)) }
    }

    /// Issues a fresh grant (new refresh-token chain) for `subject`, e.g. to seed a device.
    /// With `installId` the credential is bound to that install at once; without, it is bound
    /// to the first install it acts for (see ``Authenticator/authorize(_:actingFor:)``).
    package func issue(subject: String, installId: UUID? = nil) async throws(TokenError) -> TokenGrant {
        guard Self.isValidSubject(subject) else { throw .invalidSubject(subject) }
        let refresh = Self.newRefreshToken()
        let nowMs = Self.millis(now())
        do {
            if let installId {
                let bound = try await store.deviceBinding(subject: subject, claim: installId, nowMillis: nowMs)
                guard bound.installId == installId, !bound.revoked else {
                    throw TokenError.invalidGrant("the subject '\(subject)' is already bound to another install or revoked")
                }
            }
            try await store.insertRefreshToken(newRecord(refresh, subject: subject, nowMillis: nowMs))
        } catch let error as TokenError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .store(.queryFailed("\(error)"))
        }
        return try grant(subject: subject, refreshToken: refresh)
    }

    /// Creates an enrollment code for an app: each of `uses` installs may exchange it once
    /// (``enroll(code:installId:)``) within `ttlSeconds`; with `perHour` (a fleet code, issue
    /// 52) any number may, at most `perHour` in a rolling hour. `person` binds every install it
    /// enrols to that person, who may later re-enrol the install with another code of theirs.
    package func createEnrollmentCode(
        uses: Int, ttlSeconds: Int, label: String?, person: String? = nil, perHour: Int? = nil, createdBy: String = "admin"
    ) async throws(TokenError) -> EnrollmentCode {
        let code = "ben1." + Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) })
        let nowMs = Self.millis(now())
        let expires = nowMs + Int64(ttlSeconds) * 1000
        let record = EnrollmentCodeRecord(
            hash: Self.hash(code), label: label, createdMillis: nowMs, expiresMillis: expires, usesLeft: perHour == nil ? uses : 0,
            person: person, perHour: perHour, createdBy: createdBy)
        do {
            try await store.insertEnrollmentCode(record)
        } catch {
            throw .store(error)
        }
        return EnrollmentCode(
            code: code, id: record.id, uses: perHour == nil ? uses : nil, perHour: perHour, person: person,
            expiresAt: WireTimestamp(millis: expires).description, label: label)
    }

    /// The enrollment codes, newest first, at most `limit`.
    package func enrollmentCodes(limit: Int) async throws(StoreError) -> [EnrollmentCodeListing] {
        try await store.enrollmentCodes(limit: limit)
    }

    /// Revokes an enrollment code by its id; false when none is active under it.
    package func revokeEnrollmentCode(id: String) async throws(StoreError) -> Bool {
        try await store.revokeEnrollmentCode(id: id, nowMillis: Self.millis(now()))
    }

    /// Exchanges an enrollment code for a grant bound to `installId` (its subject is the
    /// install id's text). One use of the code is spent. An install enrols once, except that
    /// a code for the person who holds it re-enrols it (a restored phone, an app idle past its
    /// refresh token), retiring its other refresh tokens (issue 52).
    package func enroll(code: String, installId: UUID) async throws(TokenError) -> TokenGrant {
        let refresh = Self.newRefreshToken()
        let nowMs = Self.millis(now())
        let subject = installId.wireString
        let outcome: EnrollmentRedemption
        do {
            outcome = try await store.redeemEnrollmentCode(
                hash: Self.hash(code), installId: installId, refresh: newRecord(refresh, subject: subject, nowMillis: nowMs),
                nowMillis: nowMs)
        } catch {
            throw .store(error)
        }
        switch outcome {
        case .enrolled, .reenrolled: return try grant(subject: subject, refreshToken: refresh)
        case .invalidCode: throw .invalidGrant("the enrollment code is unknown, expired, revoked or used up")
        case .installTaken:
            throw .invalidGrant(
                "this install is held by another credential, or known to the server and the code is bound to no person; enrol it with a code for its person, or reset the install id"
            )
        case .installRevoked: throw .invalidGrant("this install was revoked by an admin")
        case .rateLimited(let wait): throw .slowDown(retryAfterSeconds: Int((wait + 999) / 1000))
        }
    }

    /// The install `subject` acts for (bound to `claim` on first use).
    func binding(subject: String, claim: UUID) async throws(StoreError) -> DeviceBinding {
        try await store.deviceBinding(subject: subject, claim: claim, nowMillis: Self.millis(now()))
    }

    /// Revokes every credential of an install; returns how many.
    package func revoke(installId: UUID) async throws(StoreError) -> Int {
        try await store.revokeDevice(installId: installId, nowMillis: Self.millis(now()))
    }

    private func newRecord(_ refresh: String, subject: String, nowMillis: Int64) -> RefreshTokenRecord {
        RefreshTokenRecord(
            hash: Self.hash(refresh), subject: subject, family: makeFamilyID().wireString,
            issuedMillis: nowMillis, expiresMillis: nowMillis + refreshTTL * 1000)
    }

    /// Exchanges a refresh token for a new access token and a new refresh token.
    package func refresh(_ presented: String) async throws(TokenError) -> TokenGrant {
        let next = Self.newRefreshToken()
        let nowMs = Self.millis(now())
        let record = RefreshTokenRecord(
            hash: Self.hash(next), subject: "", family: "", issuedMillis: nowMs,
            expiresMillis: nowMs + refreshTTL * 1000)
        let outcome: RefreshRotation
        do {
            outcome = try await store.rotateRefreshToken(
                presentedHash: Self.hash(presented), replacement: record, nowMillis: nowMs,
                replayWindowMillis: Int64(Self.replayWindowSeconds) * 1000)
        } catch {
            throw .store(error)
        }
        switch outcome {
        case .rotated(let subject): return try grant(subject: subject, refreshToken: next)
        case .invalid: throw .invalidGrant("the refresh token is unknown, expired or revoked")
        case .reused:
            throw .invalidGrant("the refresh token was retired (superseded, or past its replay window); its whole chain is revoked")
        }
    }

    /// The subject of a valid access token, or nil.
    package func verify(accessToken: String) -> String? {
        signerBox.value?.verify(accessToken, nowSeconds: Int64(now().timeIntervalSince1970))
    }

    private func grant(subject: String, refreshToken: String) throws(TokenError) -> TokenGrant {
        guard let signer = signerBox.value else { throw .notReady }
        let expires = Int64(now().timeIntervalSince1970) + accessTTL
        return TokenGrant(
            accessToken: signer.sign(subject: subject, expiresAt: expires),
            refreshToken: refreshToken, expiresIn: Int(accessTTL))
    }

    static func newRefreshToken() -> String {
        "brt1." + Base64URL.encode(SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) })
    }

    static func hash(_ token: String) -> String { Hex.encode(SHA256.hash(data: Array(token.utf8))) }

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Subjects are 1–100 printable ASCII characters without spaces.
    static func isValidSubject(_ s: String) -> Bool {
        !s.isEmpty && s.utf8.count <= 100 && s.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}

/// A new enrollment code, as answered to the admin or enroller who created it (the only time it is shown).
package struct EnrollmentCode: Sendable, Codable, Equatable {
    /// The secret the device presents (`grant_type=enrollment_code`).
    package var code: String
    /// Its public id, to list and revoke it (`GET`, `DELETE /v1/enrollments/{id}`).
    package var id: String
    /// How many installs may enrol with it (nil for a fleet code).
    package var uses: Int?
    /// A fleet code's allowance: installs per rolling hour.
    package var perHour: Int?
    /// The person every install it enrols belongs to.
    package var person: String?
    /// When it stops working (RFC 3339).
    package var expiresAt: String
    /// The creator's note.
    package var label: String?

    enum CodingKeys: String, CodingKey {
        case code, id, uses, person, label
        case perHour = "per_hour"
        case expiresAt = "expires_at"
    }
}

/// The token endpoint's grant: BeekonWire's, written and read by the same code on both sides (issue 31).
package typealias TokenGrant = WireTokenGrant

/// Why a token could not be issued.
package enum TokenError: Error, Sendable, CustomStringConvertible {
    /// The refresh token cannot be used (OAuth `invalid_grant`); the device needs a new seed.
    case invalidGrant(String)
    /// The subject is not 1–100 printable ASCII characters.
    case invalidSubject(String)
    /// A fleet code's hourly allowance is spent: try again in this many seconds (429).
    case slowDown(retryAfterSeconds: Int)
    /// The signing key has not been loaded yet (server still starting).
    case notReady
    /// The database failed.
    case store(StoreError)

    package var description: String {
        switch self {
        case .invalidGrant(let why): return "invalid_grant: \(why) — issue a new refresh token with `beekon-ingest issue-token`"
        case .invalidSubject(let s): return "invalid subject '\(s)': use 1–100 printable ASCII characters without spaces"
        case .slowDown(let seconds): return "slow_down: this code enrolled its hourly allowance of installs; retry in \(seconds) s"
        case .notReady: return "the token service is not ready yet (migrations still running)"
        case .store(let e): return e.description
        }
    }
}
