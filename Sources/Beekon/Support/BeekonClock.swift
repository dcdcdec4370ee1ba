import Foundation

/// The SDK's only source of time: wall-clock `now()` and sleeping. Logic never
/// calls `Date()` or `Task.sleep` directly, so tests drive hours of tracking,
/// retention and backoff with a manual clock, and a replay drives "now" from
/// the recorded fixes (SRC-4).
public protocol BeekonClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
    /// Suspends for `duration` of this clock's time; throws `CancellationError` when cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real clock: `Date()` and `Task.sleep`.
public struct SystemClock: BeekonClock {
    /// Creates the system clock.
    public init() {}
    /// The current system time.
    public func now() -> Date { Date() }
    /// Sleeps on the continuous clock.
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
