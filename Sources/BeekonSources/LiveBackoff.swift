/// Reconnect delays for a live-stream viewer: 1 s doubling to a 30 s cap, with "equal
/// jitter" (half the step fixed, half random) so that many viewers dropped at once do
/// not reconnect in lock-step. A connection that delivered its response resets it.
public struct LiveBackoff: Sendable, Equatable {
    /// The first delay (default 1 s).
    public var initial: Duration
    /// The cap (default 30 s).
    public var maximum: Duration
    /// Failed attempts since the last good connection.
    public private(set) var failures = 0

    /// Creates a backoff.
    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The un-jittered step for the next attempt: `initial · 2^failures`, capped.
    public var step: Duration {
        var d = initial
        for _ in 0..<min(failures, 32) where d < maximum { d = d * 2 }
        return min(d, maximum)
    }

    /// Records a failure and returns the delay before the next attempt; `unit` is a
    /// random number in [0, 1) (injected, so tests are deterministic).
    public mutating func nextDelay(unit: Double) -> Duration {
        let s = step
        failures += 1
        return s / 2 + s / 2 * min(max(unit, 0), 1)
    }

    /// A connection succeeded: start again from `initial`.
    public mutating func reset() { failures = 0 }
}
