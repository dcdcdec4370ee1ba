/// The device's battery as the locate guard reads it (BY-2): level, charging and Low Power
/// Mode. On iOS `BeekonDependencies.apple` reads UIKit's `UIDevice.batteryLevel` and
/// `batteryState` and Foundation's `ProcessInfo.isLowPowerModeEnabled`; elsewhere it is
/// unknown unless a ``PowerStateSource`` is injected.
public struct PowerState: Sendable, Hashable {
    /// Battery charge in 0…1; nil when unknown (UIKit answers −1 then).
    public var batteryLevel: Double?
    /// Whether the device is plugged in (charging or full).
    public var charging: Bool
    /// Whether Low Power Mode is on.
    public var lowPowerMode: Bool

    /// Nothing known: never low.
    public static let unknown = PowerState(batteryLevel: nil)

    /// Creates a reading; a level outside 0…1 or not finite is unknown.
    public init(batteryLevel: Double?, charging: Bool = false, lowPowerMode: Bool = false) {
        self.batteryLevel = batteryLevel.flatMap { $0.isFinite && $0 >= 0 && $0 <= 1 ? $0 : nil }
        self.charging = charging
        self.lowPowerMode = lowPowerMode
    }

    /// Low: Low Power Mode on, or a known level at or below `threshold` while not charging.
    package func isLow(threshold: Double) -> Bool {
        if lowPowerMode { return true }
        guard !charging, let batteryLevel else { return false }
        return batteryLevel <= threshold
    }
}

/// Where the SDK reads the battery (a seam: tests and the Linux agent inject one).
public protocol PowerStateSource: Sendable {
    /// The battery now.
    func current() async -> PowerState
}
