/// Ready-made gate and power settings (FX-3).
public enum Preset: String, Sendable, Hashable, Codable, CaseIterable {
    /// 60 s / 150 m, low power.
    case saver
    /// 30 s / 100 m, balanced power (the default).
    case balanced
    /// 10 s / 30 m, best accuracy.
    case precision

    /// Minimum seconds between admitted fixes.
    public var minTimeBetweenLocationsSeconds: Double {
        switch self {
        case .saver: 60
        case .balanced: 30
        case .precision: 10
        }
    }

    /// Minimum metres between admitted fixes.
    public var minDistanceBetweenLocationsMeters: Double {
        switch self {
        case .saver: 150
        case .balanced: 100
        case .precision: 30
        }
    }

    /// The source power mode this preset asks for.
    public var powerMode: PowerMode {
        switch self {
        case .saver: .low
        case .balanced: .balanced
        case .precision: .high
        }
    }
}
