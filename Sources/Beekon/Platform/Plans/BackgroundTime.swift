/// How `UIApplication.backgroundTimeRemaining` reads as an ``ExecutionLease`` allowance:
/// in the foreground (or while a background mode keeps the app running) UIKit answers
/// `Double.greatestFiniteMagnitude`, which means unlimited; otherwise the seconds left.
package enum BackgroundTime {
    /// Anything above this many seconds is "no limit" (UIKit's answer is DBL_MAX).
    package static let unlimitedThresholdSeconds = 1e9

    /// The remaining time as the lease reports it: nil for unlimited, else ≥ 0.
    package static func remaining(seconds: Double) -> Duration? {
        guard seconds.isFinite, seconds < unlimitedThresholdSeconds else { return nil }
        return .milliseconds(Int64(max(0, seconds) * 1000))
    }
}
