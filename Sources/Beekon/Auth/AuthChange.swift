import BeekonWire
import Foundation

/// One rotation of the live token set, emitted on `Beekon.authChanges` so an app can
/// mirror the tokens into its own session store. Its descriptions redact the tokens;
/// read the properties to get them.
public struct AuthChange: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The new access token.
    public var accessToken: String
    /// The refresh token now in effect (rotated, or the previous one kept).
    public var refreshToken: String?
    /// When the new access token expires, if the endpoint said.
    public var expiresAt: Date?

    /// Creates a change.
    public init(accessToken: String, refreshToken: String?, expiresAt: Date?) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }

    public var description: String {
        "AuthChange(accessToken: \(Redaction.mask(accessToken)), refreshToken: \(Redaction.mask(refreshToken)), "
            + "expiresAt: \(expiresAt.map { "\(WireTimestamp($0))" } ?? "nil"))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}

/// The live token set the SDK owns, as persisted in the vault.
struct TokenSet: Sendable, Hashable, Codable, CustomStringConvertible {
    var accessToken: String?
    var refreshToken: String?
    /// Epoch seconds.
    var expiresAt: Double?

    var expiryDate: Date? { expiresAt.map { Date(timeIntervalSince1970: $0) } }

    var description: String {
        "TokenSet(accessToken: \(Redaction.mask(accessToken)), refreshToken: \(Redaction.mask(refreshToken)), expiresAt: \(expiresAt.map { "\($0)" } ?? "nil"))"
    }
}
