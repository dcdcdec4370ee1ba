import Foundation

/// The `Beekon` actor's view of the running location source: which run a fix belongs to,
/// whether it ended, who waits for that, and the tasks that feed and wake it.
struct SourceRun: Sendable {
    /// Increments on every provider start/stop so fixes from an old run are ignored.
    var generation = 0
    /// The source ended or failed (or was stopped) and every fix it delivered was processed.
    var ended = false
    /// Callers of `waitUntilSourceEnds()`.
    var endWaiters: [CheckedContinuation<Void, Never>] = []
    /// The tuning last told to a tuning-aware provider (``SourceTuning``).
    var tuning: SourceTuning?
    /// Whether the distance filter is lifted for one fix: nothing came through it for the
    /// stationary dwell, so the detector needs a fix to judge the dwell (FX-6).
    var checkingDwell = false
    /// Lifts the distance filter after the dwell without a fix.
    var dwellTimer: Task<Void, Never>?
    /// Reads the provider's stream into the actor.
    var consumer: Task<Void, Never>?
    /// Wakes a paused source for one fix (FX-6).
    var probeTimer: Task<Void, Never>?
    /// Records the next stationary check-in (FX-6).
    var checkInTimer: Task<Void, Never>?
    /// Asks for a fresh fix when none was stored within `heartbeatSeconds` (BY-4, foreground).
    var heartbeatTimer: Task<Void, Never>?
    /// The run and the interval `heartbeatTimer` was started for.
    var heartbeatArmed: (generation: Int, seconds: Double)?
    /// When the heartbeat is due, on the SDK's clock: `heartbeatSeconds` after the last stored
    /// fix (or the arming). A stored fix moves it; the timer sleeps on until it has passed.
    var heartbeatDeadline: Date?

    /// Takes the end waiters, to be resumed.
    mutating func takeEndWaiters() -> [CheckedContinuation<Void, Never>] {
        defer { endWaiters = [] }
        return endWaiters
    }
}
