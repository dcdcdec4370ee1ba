import Foundation

/// One activity estimate of the device's motion coprocessor (CoreMotion's `CMMotionActivity`
/// on Apple platforms), as a platform-neutral value (BY-4). Several flags may be set at once
/// (`automotive` and `stationary` at a red light); ``activity(minimumConfidence:)`` decides.
public struct MotionActivity: Sendable, Hashable {
    /// How sure the estimate is (`CMMotionActivityConfidence`).
    public enum Confidence: Int, Sendable, Hashable, Comparable, Codable {
        /// `.low`
        case low = 0
        /// `.medium`
        case medium = 1
        /// `.high`
        case high = 2

        /// Orders by certainty.
        public static func < (a: Confidence, b: Confidence) -> Bool { a.rawValue < b.rawValue }
    }

    /// The device is not moving.
    public var stationary = false
    /// On foot, walking.
    public var walking = false
    /// On foot, running.
    public var running = false
    /// On a bicycle.
    public var cycling = false
    /// In a vehicle.
    public var automotive = false
    /// The coprocessor could not tell.
    public var unknown = false
    /// How sure it is.
    public var confidence = Confidence.low
    /// When this activity began (`CMMotionActivity.startDate`).
    public var startDate: Date
    /// When the SDK received it (the injected clock's time): how fresh it is.
    public var receivedAt: Date

    /// Creates an estimate with no flag set (read as `unknown`).
    public init(confidence: Confidence, startDate: Date, receivedAt: Date) {
        self.confidence = confidence
        self.startDate = startDate
        self.receivedAt = receivedAt
    }

    /// The SDK's activity: `unknown` below `minimumConfidence` or when no motion flag is set;
    /// otherwise the most specific flag — `automotive` (a vehicle stopped at a light is still
    /// a vehicle), then `cycling`, `running`, `walking`, and `stationary` last.
    public func activity(minimumConfidence: Confidence) -> Activity {
        guard confidence >= minimumConfidence, !unknown else { return .unknown }
        if automotive { return .automotive }
        if cycling { return .cycling }
        if running { return .running }
        if walking { return .walking }
        if stationary { return .stationary }
        return .unknown
    }
}
