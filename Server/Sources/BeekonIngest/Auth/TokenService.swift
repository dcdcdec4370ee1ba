import Crypto
import Foundation
import Logging

/// Issues access tokens and rotating refresh tokens, in the response shape the
/// SDK's `AuthConfig` reads (`access_token`, `refresh_token`, `expires_in`).
///
/// Rotation: each refresh returns a new refresh token and retires the old one.
/// If the answer to a refresh is lost, the device may present the old token
/// again as long as the new one was never used; presenting a retired token
/// whose successor *was* used revokes the whole chain (token theft).
public final class TokenService: Sendable {
    let store: any TokenStore
    let accessTTL: Int64
    let refreshTTL: Int64
    let now: @Sendable () -> Date
    private let signerBox = LockedBox<AccessTokenSigner?>(nil)

    /// Creates the service; call `loadKey()` after migrations before serving.
    public init(store: any TokenStore, accessTTLSeconds: Int, refreshTTLSeconds: Int, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.accessTTL = Int64(accessTTLSeconds)
        self.refreshTTL = Int64(refreshTTLSeconds)
        self.now = now
    }

    /// Loads (or creates) the shared signing key from the store.
    public func loadKey() async throws(StoreError) {
        let proposed = SymmetricKey(size: .bits256).withUnsafeBytes { [UInt8]($0) }
        let key = try await store.signingKey(proposed: proposed)
        signerBox.set(AccessTokenSigner(key: key))
    }

    /// Issues a fresh grant (new refresh-token chain) for `subject`, e.g. to seed a device.
    public func issue(subject: String) async throws(TokenError) -> TokenGrant {
        guard Self.isValidSubject(subject) else { throw .invalidSubject(subject) }
        let refresh = Self.newRefreshToken()
        let nowMs = Self.millis(now())
        do {
            try await store.insertRefreshToken(
                RefreshTokenRecord(
                    hash: Self.hash(refresh), subject: subject, family: UUID().uuidString.lowercased(),
                    issuedMillis: nowMs, expiresMillis: nowMs + refreshTTL * 1000))
        } catch {
            throw .store(error)
        }
        return try grant(subject: subject, refreshToken: refresh)
    }

    /// Exchanges a refresh token for a new access token and a new refresh token.
    public func refresh(_ presented: String) async throws(TokenError) -> TokenGrant {
        let next = Self.newRefreshToken()
        let nowMs = Self.millis(now())
        let record = RefreshTokenRecord(
            hash: Self.hash(next), subject: "", family: "", issuedMillis: nowMs,
            expiresMillis: nowMs + refreshTTL * 1000)
        let outcome: RefreshRotation
        do {
            outcome = try await store.rotateRefreshToken(presentedHash: Self.hash(presented), replacement: record, nowMillis: nowMs)
        } catch {
            throw .store(error)
        }
        switch outcome {
        case .rotated(let subject): return try grant(subject: subject, refreshToken: next)
        case .invalid: throw .invalidGrant("the refresh token is unknown, expired or revoked")
        case .reused: throw .invalidGrant("the refresh token was already rotated and its successor used; the chain is revoked")
        }
    }

    /// The subject of a valid access token, or nil.
    public func verify(accessToken: String) -> String? {
        signerBox.get()?.verify(accessToken, nowSeconds: Int64(now().timeIntervalSince1970))
    }

    private func grant(subject: String, refreshToken: String) throws(TokenError) -> TokenGrant {
        guard let signer = signerBox.get() else { throw .notReady }
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

/// A token response, encoded as `{"access_token", "token_type", "expires_in", "refresh_token"}`.
public struct TokenGrant: Sendable, Codable, Equatable {
    /// Short-lived bearer token for uploads.
    public var accessToken: String
    /// The next refresh token (the presented one is retired).
    public var refreshToken: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// Always `Bearer`.
    public var tokenType = "Bearer"

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresIn = "expires_in"
        case tokenType = "token_type"
    }
}

/// Why a token could not be issued.
public enum TokenError: Error, Sendable, CustomStringConvertible {
    /// The refresh token cannot be used (OAuth `invalid_grant`); the device needs a new seed.
    case invalidGrant(String)
    /// The subject is not 1–100 printable ASCII characters.
    case invalidSubject(String)
    /// The signing key has not been loaded yet (server still starting).
    case notReady
    /// The database failed.
    case store(StoreError)

    public var description: String {
        switch self {
        case .invalidGrant(let why): return "invalid_grant: \(why) — issue a new refresh token with `beekon-ingest issue-token`"
        case .invalidSubject(let s): return "invalid subject '\(s)': use 1–100 printable ASCII characters without spaces"
        case .notReady: return "the token service is not ready yet (migrations still running)"
        case .store(let e): return e.description
        }
    }
}
