import Foundation

/// The device-side guards for locate requests (SPEC BY-2, BY-3), configurable with
/// `Beekon.setLocatePolicy(_:)`, which persists them in the database: an app relaunched in
/// the background by a silent push applies the user's choice before it answers anything.
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
    /// Battery level (0…1) at or below which the device counts as low on battery; Low Power
    /// Mode counts as low whatever the level. Default 0.2.
    public var lowBatteryLevel: Double
    /// Least time between two answered requests while the battery is low (battery guard);
    /// a request sooner is refused with `low_battery`. Default 600 s.
    public var lowBatteryMinIntervalSeconds: Double

    /// Creates a policy.
    public init(
        sharingEnabled: Bool = true, minIntervalSeconds: Double = 30, timeoutSeconds: Double = 15,
        lowBatteryLevel: Double = 0.2, lowBatteryMinIntervalSeconds: Double = 600
    ) {
        self.sharingEnabled = sharingEnabled
        self.minIntervalSeconds = max(0, minIntervalSeconds)
        self.timeoutSeconds = max(0.1, timeoutSeconds)
        self.lowBatteryLevel = lowBatteryLevel.isFinite ? min(1, max(0, lowBatteryLevel)) : 0.2
        self.lowBatteryMinIntervalSeconds = max(0, lowBatteryMinIntervalSeconds)
    }

    /// The config-file keys: `sharing`, `minIntervalSeconds`, `timeoutSeconds`, `lowBatteryLevel`,
    /// `lowBatteryMinIntervalSeconds`.
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case sharingEnabled = "sharing"
        case minIntervalSeconds, timeoutSeconds, lowBatteryLevel, lowBatteryMinIntervalSeconds
    }

    /// The names of the policy's config-file keys.
    package static var keyNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    /// Decodes a policy (every key optional); `minIntervalSeconds` and
    /// `lowBatteryMinIntervalSeconds` must be ≥ 0, `timeoutSeconds` in (0, 600] and
    /// `lowBatteryLevel` in [0, 1].
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
        let level = try c.decodeIfPresent(Double.self, forKey: .lowBatteryLevel) ?? d.lowBatteryLevel
        guard level >= 0, level <= 1 else {
            throw DecodingError.configValue(decoder.codingPath, CodingKeys.lowBatteryLevel, "must be in [0, 1]")
        }
        let lowInterval = try c.decodeIfPresent(Double.self, forKey: .lowBatteryMinIntervalSeconds) ?? d.lowBatteryMinIntervalSeconds
        guard lowInterval >= 0 else {
            throw DecodingError.configValue(decoder.codingPath, CodingKeys.lowBatteryMinIntervalSeconds, "must be at least 0")
        }
        self.init(
            sharingEnabled: try c.decodeIfPresent(Bool.self, forKey: .sharingEnabled) ?? d.sharingEnabled,
            minIntervalSeconds: interval, timeoutSeconds: timeout, lowBatteryLevel: level,
            lowBatteryMinIntervalSeconds: lowInterval)
    }
}

/// How the SDK answered a locate request.
public enum LocateAnswer: Sendable, Equatable {
    /// One fresh fix, stored (trigger `manual`, carrying the request id) and uploaded.
    case answered(Location)
    /// Declined, with the reason sent to the server: `sharing_off`, `too_soon`,
    /// `low_battery`, `no_fix` or `store_failed`; `already_handled` (not sent) when the same request id was handled
    /// before, e.g. delivered both in an upload's answer and on the command channel.
    case refused(reason: String)
}

/// The guard state: the policy and when a request was last answered, both persisted
/// (`LocationStore.locateGuard()`), read from the store before the first request is judged.
struct LocateGuard: Sendable, Equatable {
    var policy = LocatePolicy()
    var lastAnswered: Date?
    /// Whether the persisted policy and last answer were read into this value.
    var restored = false
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

    /// The refusal reason before asking the source, or nil to go ahead: sharing first, then
    /// the least interval, then the longer one that applies while `power` is low.
    func refusal(now: Date, power: PowerState = .unknown) -> String? {
        guard policy.sharingEnabled else { return "sharing_off" }
        guard let lastAnswered, now >= lastAnswered else { return nil }  // a clock that stepped back locks nothing
        let since = now.timeIntervalSince(lastAnswered)
        if since < policy.minIntervalSeconds { return "too_soon" }
        if power.isLow(threshold: policy.lowBatteryLevel), since < policy.lowBatteryMinIntervalSeconds { return "low_battery" }
        return nil
    }
}
