/// Persistence for the token endpoint: the access-token signing key and the
/// refresh-token chain. Kept in the database so that several server instances
/// share both.
public protocol TokenStore: Sendable {
    /// Returns the signing key, creating it on first use (the first instance wins).
    func signingKey(proposed: [UInt8]) async throws(StoreError) -> [UInt8]
    /// Records a freshly issued refresh token (start of a new family).
    func insertRefreshToken(_ record: RefreshTokenRecord) async throws(StoreError)
    /// Rotates a presented refresh token into `replacement`, atomically.
    func rotateRefreshToken(presentedHash: String, replacement: RefreshTokenRecord, nowMillis: Int64) async throws(StoreError)
        -> RefreshRotation
}

/// One refresh token as stored (only its hash is kept).
public struct RefreshTokenRecord: Sendable, Equatable {
    /// SHA-256 of the token, hex.
    public var hash: String
    /// The device / principal it was issued to.
    public var subject: String
    /// The chain it belongs to (all rotations of one grant).
    public var family: String
    /// Issue and expiry time, Unix ms.
    public var issuedMillis: Int64, expiresMillis: Int64

    /// Creates a record.
    public init(hash: String, subject: String, family: String, issuedMillis: Int64, expiresMillis: Int64) {
        self.hash = hash
        self.subject = subject
        self.family = family
        self.issuedMillis = issuedMillis
        self.expiresMillis = expiresMillis
    }
}

/// The result of presenting a refresh token.
public enum RefreshRotation: Sendable, Equatable {
    /// Rotated; the replacement was stored for `subject`.
    case rotated(subject: String)
    /// Unknown, expired or revoked token.
    case invalid
    /// A token whose successor was already used: the whole family is now revoked.
    case reused
}
