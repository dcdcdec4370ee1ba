import Foundation

/// The device-side guards for locate requests (SPEC BY-2, BY-3), configurable with
/// `Beekon.setLocatePolicy(_:)`.
public struct LocatePolicy: Sendable, Equatable, Codable {
    /// Whether this device shares its position on request; off: every request is refused
    /// with the reason `sharing_off`.
    public var sharingEnabled: Bool
    /// Least time between two answered requests (battery guard); a request sooner is
    /// refused with `too_soon`. Default 30 s.
    public var minIntervalSeconds: Double
    /// How long to wait for a fresh fix; without one the request is refused with `no_fix`
    /// (a cached fix is never sent as an answer: it would put a new timestamp on old data).
    /// Default 15 s.
    public var timeoutSeconds: Double

    /// Creates a policy.
    public init(sharingEnabled: Bool = true, minIntervalSeconds: Double = 30, timeoutSeconds: Double = 15) {
        self.sharingEnabled = sharingEnabled
        self.minIntervalSeconds = max(0, minIntervalSeconds)
        self.timeoutSeconds = max(0.1, timeoutSeconds)
    }

    /// The config-file keys: `sharing`, `minIntervalSeconds`, `timeoutSeconds`.
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case sharingEnabled = "sharing"
        case minIntervalSeconds, timeoutSeconds
    }

    /// The names of the policy's config-file keys.
    package static var keyNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// Decodes a policy (every key optional); `minIntervalSeconds` must be ≥ 0 and
    /// `timeoutSeconds` in (0, 600].
    public init(from decoder: any Decoder) throws {
        try decoder.checkConfigKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = LocatePolicy()
        let interval = try c.decodeIfPresent(Double.self, forKey: .minIntervalSeconds) ?? d.minIntervalSeconds
        guard interval >= 0 else {
            throw DecodingError.configValue(decoder.codingPath, CodingKeys.minIntervalSeconds, "must be at least 0")
        }
        let timeout = try c.decodeIfPresent(Double.self, forKey: .timeoutSeconds) ?? d.timeoutSeconds
        guard timeout > 0, timeout <= 600 else {
            throw DecodingError.configValue(decoder.codingPath, CodingKeys.timeoutSeconds, "must be in (0, 600]")
        }
        self.init(
            sharingEnabled: try c.decodeIfPresent(Bool.self, forKey: .sharingEnabled) ?? d.sharingEnabled,
            minIntervalSeconds: interval, timeoutSeconds: timeout)
    }
}

/// How the SDK answered a locate request.
public enum LocateAnswer: Sendable, Equatable {
    /// One fresh fix, stored (trigger `manual`, carrying the request id) and uploaded.
    case answered(Location)
    /// Declined, with the reason sent to the server: `sharing_off`, `too_soon`, `no_fix`
    /// or `store_failed`; `already_handled` (not sent) when the same request id was handled
    /// before, e.g. delivered both in an upload's answer and on the command channel.
    case refused(reason: String)
}

/// The guard state: the policy and when a request was last answered.
struct LocateGuard: Sendable, Equatable {
    var policy = LocatePolicy()
    var lastAnswered: Date?
    /// The most recent request ids handled (a request can arrive twice: in an upload's
    /// answer and on the command channel); at most `rememberedLimit`.
    private(set) var handled: [UUID] = []
    static let rememberedLimit = 64

    /// Records `id` as handled; false when it already was (the caller then does nothing).
    mutating func claim(_ id: UUID) -> Bool {
        guard !handled.contains(id) else { return false }
        handled.append(id)
        if handled.count > Self.rememberedLimit { handled.removeFirst(handled.count - Self.rememberedLimit) }
        return true
    }

    /// The refusal reason before asking the source, or nil to go ahead.
    func refusal(now: Date) -> String? {
        guard policy.sharingEnabled else { return "sharing_off" }
        if let lastAnswered, now.timeIntervalSince(lastAnswered) < policy.minIntervalSeconds, now >= lastAnswered {
            return "too_soon"
        }
        return nil
    }
}
