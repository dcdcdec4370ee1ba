import Foundation

/// When each request of an open-loop run is due: request `i` at `i / rate` seconds after the
/// start, whether or not earlier requests have been answered (no coordinated omission).
public struct OpenLoopSchedule: Sendable, Equatable {
    /// Requests per second.
    public let rate: Double
    /// Requests in the run.
    public let count: Int

    /// A run of `count` requests at `rate` per second.
    public init(rate: Double, count: Int) {
        precondition(rate > 0 && count >= 0, "rate must be positive")
        self.rate = rate
        self.count = count
    }

    /// A run of `duration` seconds at `rate` per second (at least one request).
    public init(rate: Double, duration: Double) {
        self.init(rate: rate, count: max(1, Int((rate * duration).rounded())))
    }

    /// How long after the start request `index` is due.
    public func offset(of index: Int) -> Duration {
        .nanoseconds(Int64((Double(index) * 1e9 / rate).rounded()))
    }
}

/// Runs an ``OpenLoopSchedule``: sleeps until each request is due, then starts it in its own
/// child task without waiting for any earlier one. `send` gets the request's index and the
/// instant it was due, so latency is measured from the schedule, not from when the sender
/// got round to it (a run that falls behind shows it in the latency, never hides it).
public enum OpenLoop {
    /// Sends every request of `schedule` on `clock`'s time; returns when all have finished.
    public static func run<C: Clock>(
        _ schedule: OpenLoopSchedule, clock: C, send: @escaping @Sendable (Int, C.Instant) async -> Void
    ) async where C.Duration == Duration, C.Instant: Sendable {
        let start = clock.now
        await withDiscardingTaskGroup { group in
            for index in 0..<schedule.count {
                let due = start.advanced(by: schedule.offset(of: index))
                do { try await clock.sleep(until: due, tolerance: nil) } catch { return }
                group.addTask { await send(index, due) }
            }
        }
    }
}
