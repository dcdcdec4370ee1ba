import Foundation

/// Opt-in upload of stored fixes to your backend (SY-1). Without it the SDK makes
/// no network request at all.
public struct SyncConfig: Sendable, Hashable, Codable {
    /// Your ingest endpoint, used verbatim. `https`, or `http` to a loopback host only (SY-2).
    public var url: URL
    /// Static headers on every upload (e.g. an API key); an `Authorization` from `auth` wins (AU-1).
    public var headers: [String: String]
    /// Scheduled upload cadence in seconds (default 300; values below 60 are raised to 60).
    public var intervalSeconds: Double
    /// Maximum locations per upload (default 100; clamped to 1…1000).
    public var batchSize: Int
    /// Upload early once this many regular fixes are pending (0 = only on schedule).
    public var syncThreshold: Int
    /// Whether acknowledged fixes stay in local history until the age prune (default true, ST-4);
    /// false deletes them on acknowledgement.
    public var keepUploadedLocations: Bool
    /// Declarative token refresh (AU-1..9); nil ⇒ only the static `headers` authenticate.
    public var auth: AuthConfig?
    /// Hard deadline of one upload in seconds (SY-11); nil means 30, clamped to 1…120.
    public var requestTimeoutSeconds: Double?
    /// PEM files of CA certificates trusted for uploads and token refresh in addition to the
    /// system's store (a private CA). Used by the Linux agent's transport; on Apple
    /// platforms `URLSessionTransport` trusts what the device trusts and ignores it.
    public var trustedCertificates: [String]?
    /// What uploads may reveal: grid blur and privacy zones (BY-4); nil uploads precise fixes.
    public var privacy: PrivacyConfig?

    /// Creates a sync configuration.
    public init(
        url: URL, headers: [String: String] = [:], intervalSeconds: Double = 300, batchSize: Int = 100,
        syncThreshold: Int = 0, keepUploadedLocations: Bool = true, auth: AuthConfig? = nil,
        requestTimeoutSeconds: Double? = nil, trustedCertificates: [String]? = nil, privacy: PrivacyConfig? = nil
    ) {
        self.privacy = privacy
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.trustedCertificates = trustedCertificates
        self.url = url
        self.headers = headers
        self.intervalSeconds = intervalSeconds
        self.batchSize = batchSize
        self.syncThreshold = syncThreshold
        self.keepUploadedLocations = keepUploadedLocations
        self.auth = auth
    }

    /// The interval in effect: at least 60 s.
    public var effectiveIntervalSeconds: Double { intervalSeconds.isFinite ? max(60, intervalSeconds) : 300 }

    /// The upload deadline in effect: 30 s unless set, clamped to 1…120 s.
    public var effectiveRequestTimeout: Duration {
        guard let t = requestTimeoutSeconds, t.isFinite else { return .seconds(30) }
        return .milliseconds(Int64(min(120, max(1, t)) * 1000))
    }

    /// The batch size in effect: 1…1000.
    public var effectiveBatchSize: Int { min(1000, max(1, batchSize)) }

    /// The persisted and config-file keys (the agent's `--config` reads exactly these).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, headers, intervalSeconds, batchSize, syncThreshold, keepUploadedLocations, requestTimeoutSeconds
        case trustedCertificates, auth, privacy
    }

    /// The names of the sync configuration's keys, in declaration order.
    package static var keyNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// Decodes a sync configuration: `url` is required, every other field takes its default.
    /// In a config file (`ConfigDecoding.strict`) `trustedCertificates` must list at least one path.
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SyncConfig(url: URL(fileURLWithPath: "/"))
        self.init(
            url: try c.decode(URL.self, forKey: .url),
            headers: try c.decodeIfPresent([String: String].self, forKey: .headers) ?? d.headers,
            intervalSeconds: try c.decodeIfPresent(Double.self, forKey: .intervalSeconds) ?? d.intervalSeconds,
            batchSize: try c.decodeIfPresent(Int.self, forKey: .batchSize) ?? d.batchSize,
            syncThreshold: try c.decodeIfPresent(Int.self, forKey: .syncThreshold) ?? d.syncThreshold,
            keepUploadedLocations: try c.decodeIfPresent(Bool.self, forKey: .keepUploadedLocations) ?? d.keepUploadedLocations,
            auth: try c.decodeIfPresent(AuthConfig.self, forKey: .auth),
            requestTimeoutSeconds: try c.decodeIfPresent(Double.self, forKey: .requestTimeoutSeconds),
            trustedCertificates: try c.decodeIfPresent([String].self, forKey: .trustedCertificates),
            privacy: try c.decodeIfPresent(PrivacyConfig.self, forKey: .privacy))
        if decoder.isStrictConfig, trustedCertificates?.isEmpty == true {
            throw DecodingError.configValue(decoder.codingPath, CodingKeys.trustedCertificates, "must list at least one PEM file path")
        }
    }

    /// Checks the URL rule (SY-2) and the numbers; throws naming the field.
    public func validate() throws(BeekonError) {
        try EndpointRule.check(url, field: "sync.url")
        guard intervalSeconds.isFinite, intervalSeconds > 0 else {
            throw .invalidConfiguration("sync.intervalSeconds must be a positive number")
        }
        guard syncThreshold >= 0 else { throw .invalidConfiguration("sync.syncThreshold must be ≥ 0") }
        if trustedCertificates?.contains(where: \.isEmpty) == true {
            throw .invalidConfiguration("sync.trustedCertificates must list PEM file paths (got an empty one)")
        }
        try auth?.validate()
        try privacy?.validate()
    }
}
