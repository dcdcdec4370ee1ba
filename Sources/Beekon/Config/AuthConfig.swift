import Foundation

/// Declarative token refresh for uploads (AU-1..9): the SDK attaches a token to every
/// upload and refreshes it itself against your token endpoint — proactively before it
/// expires and reactively on 401/403 — headless, with no callback into app code.
///
/// `accessToken`, `refreshToken` and `expiresAt` are a *seed*: adopted once, after which
/// the SDK owns the live token set (persisted encrypted). Passing different seed tokens to
/// a later `configure()` re-seeds. Encoding an `AuthConfig` (e.g. when the SDK persists its
/// configuration) never writes the seed tokens, and its descriptions redact them.
public struct AuthConfig: Sendable, Hashable, Codable {
    /// How the access token attaches to uploads.
    public enum Strategy: String, Sendable, Hashable, Codable, CaseIterable {
        /// `Authorization: Bearer <token>`.
        case bearer
        /// `Authorization: <token>`.
        case raw
    }

    /// How the refresh request's body is encoded.
    public enum BodyFormat: String, Sendable, Hashable, Codable, CaseIterable {
        /// `application/x-www-form-urlencoded`.
        case form
        /// `application/json` (an object of strings).
        case json
    }

    /// Where to read values in the refresh response; each a dot-path such as
    /// `data.access_token` (array elements by index: `items.0.token`). Unset entries
    /// fall back to the standard keys (AU-4).
    public struct ResponseMapping: Sendable, Hashable, Codable {
        /// Path of the new access token.
        public var accessToken: String?
        /// Path of the new refresh token (rotation).
        public var refreshToken: String?
        /// Path of an absolute expiry (epoch seconds).
        public var expiresAt: String?
        /// Path of a relative expiry (seconds from now).
        public var expiresIn: String?

        /// Creates a mapping.
        public init(accessToken: String? = nil, refreshToken: String? = nil, expiresAt: String? = nil, expiresIn: String? = nil) {
            self.accessToken = accessToken
            self.refreshToken = refreshToken
            self.expiresAt = expiresAt
            self.expiresIn = expiresIn
        }

        private enum CodingKeys: String, CodingKey, CaseIterable {
            case accessToken, refreshToken, expiresAt, expiresIn
        }

        /// Decodes a mapping; every path is optional.
        public init(from decoder: any Decoder) throws {
            try decoder.checkConfigKeys(CodingKeys.self)
            let c = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                accessToken: try c.decodeIfPresent(String.self, forKey: .accessToken),
                refreshToken: try c.decodeIfPresent(String.self, forKey: .refreshToken),
                expiresAt: try c.decodeIfPresent(String.self, forKey: .expiresAt),
                expiresIn: try c.decodeIfPresent(String.self, forKey: .expiresIn))
        }
    }

    /// The default refresh headers: `Authorization: Bearer {accessToken}`.
    public static let defaultRefreshHeaders = ["Authorization": "Bearer {accessToken}"]

    /// Seed access token (optional).
    public var accessToken: String?
    /// Seed refresh token / long-lived credential.
    public var refreshToken: String?
    /// Seed expiry in epoch seconds; nil ⇒ no proactive refresh (reactive only).
    public var expiresAt: Double?
    /// How the token attaches (default bearer).
    public var strategy: Strategy
    /// Token endpoint (`https`, or `http` to a loopback host); nil ⇒ seed-only, no refresh.
    public var refreshUrl: URL?
    /// Refresh body fields; `{accessToken}` / `{refreshToken}` are substituted at refresh time.
    public var refreshPayload: [String: String]
    /// Refresh request headers, same templating (default `Authorization: Bearer {accessToken}`).
    public var refreshHeaders: [String: String]
    /// Refresh body encoding (default form).
    public var refreshBodyFormat: BodyFormat
    /// Overrides of the response keys read (dot-paths allowed).
    public var responseMapping: ResponseMapping?
    /// Refresh this many seconds before `expiresAt` (default 60).
    public var skewMarginSeconds: Double

    /// Creates an auth recipe; every field but the seed has the default of AU-2.
    public init(
        accessToken: String? = nil, refreshToken: String? = nil, expiresAt: Double? = nil,
        strategy: Strategy = .bearer, refreshUrl: URL? = nil, refreshPayload: [String: String] = [:],
        refreshHeaders: [String: String] = AuthConfig.defaultRefreshHeaders, refreshBodyFormat: BodyFormat = .form,
        responseMapping: ResponseMapping? = nil, skewMarginSeconds: Double = 60
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.strategy = strategy
        self.refreshUrl = refreshUrl
        self.refreshPayload = refreshPayload
        self.refreshHeaders = refreshHeaders
        self.refreshBodyFormat = refreshBodyFormat
        self.responseMapping = responseMapping
        self.skewMarginSeconds = skewMarginSeconds
    }

    /// Checks the refresh URL rule (same as SY-2) and the numbers; errors never contain tokens.
    /// - Throws: `BeekonError.invalidConfiguration` naming the field: a refresh URL that is not absolute https (or http to a loopback host), a negative `skewMarginSeconds`, a non-finite `expiresAt`.
    public func validate() throws(BeekonError) {
        if let refreshUrl { try EndpointRule.check(refreshUrl, field: "sync.auth.refreshUrl") }
        guard skewMarginSeconds.isFinite, skewMarginSeconds >= 0 else {
            throw .invalidConfiguration("sync.auth.skewMarginSeconds must be a number ≥ 0")
        }
        if let expiresAt, !expiresAt.isFinite {
            throw .invalidConfiguration("sync.auth.expiresAt must be a finite number of epoch seconds")
        }
    }

    /// Whether the recipe carries seed tokens at all.
    var hasSeedTokens: Bool { accessToken?.isEmpty == false || refreshToken?.isEmpty == false }

    // MARK: - Codable (seed tokens are never encoded)

    /// The names of the auth configuration's keys, in declaration order.
    package static var keyNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case accessToken, refreshToken, expiresAt, strategy, refreshUrl, refreshPayload, refreshHeaders
        case refreshBodyFormat, responseMapping, skewMarginSeconds
    }

    /// Decodes every field, each optional with its default.
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try c.decodeIfPresent(String.self, forKey: .accessToken)
        refreshToken = try c.decodeIfPresent(String.self, forKey: .refreshToken)
        expiresAt = try c.decodeIfPresent(Double.self, forKey: .expiresAt)
        strategy = try c.decodeIfPresent(Strategy.self, forKey: .strategy) ?? .bearer
        refreshUrl = try c.decodeIfPresent(URL.self, forKey: .refreshUrl)
        refreshPayload = try c.decodeIfPresent([String: String].self, forKey: .refreshPayload) ?? [:]
        refreshHeaders = try c.decodeIfPresent([String: String].self, forKey: .refreshHeaders) ?? Self.defaultRefreshHeaders
        refreshBodyFormat = try c.decodeIfPresent(BodyFormat.self, forKey: .refreshBodyFormat) ?? .form
        responseMapping = try c.decodeIfPresent(ResponseMapping.self, forKey: .responseMapping)
        skewMarginSeconds = try c.decodeIfPresent(Double.self, forKey: .skewMarginSeconds) ?? 60
    }

    /// Encodes the recipe **without** `accessToken` and `refreshToken`: the live tokens are
    /// secrets kept only in the `SecretStore`, never in a persisted configuration.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(expiresAt, forKey: .expiresAt)
        try c.encode(strategy, forKey: .strategy)
        try c.encodeIfPresent(refreshUrl, forKey: .refreshUrl)
        try c.encode(refreshPayload, forKey: .refreshPayload)
        try c.encode(refreshHeaders, forKey: .refreshHeaders)
        try c.encode(refreshBodyFormat, forKey: .refreshBodyFormat)
        try c.encodeIfPresent(responseMapping, forKey: .responseMapping)
        try c.encode(skewMarginSeconds, forKey: .skewMarginSeconds)
    }
}

extension AuthConfig: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A description with the tokens (and templated values that may hold secrets) redacted.
    public var description: String {
        var parts = [
            "accessToken: \(Redaction.mask(accessToken))", "refreshToken: \(Redaction.mask(refreshToken))",
            "strategy: \(strategy.rawValue)", "refreshBodyFormat: \(refreshBodyFormat.rawValue)",
            "skewMarginSeconds: \(skewMarginSeconds)",
        ]
        if let expiresAt { parts.append("expiresAt: \(expiresAt)") }
        if let refreshUrl { parts.append("refreshUrl: \(EndpointRule.redacted(refreshUrl))") }
        parts.append("refreshPayload: [\(refreshPayload.keys.sorted().joined(separator: ", "))]")
        parts.append("refreshHeaders: [\(refreshHeaders.keys.sorted().joined(separator: ", "))]")
        return "AuthConfig(\(parts.joined(separator: ", ")))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["redacted": description], displayStyle: .struct)
    }
}
