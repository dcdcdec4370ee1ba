import BeekonPrimitives
import Foundation

/// Where CoreMotion's estimates arrive (BY-4): the Apple glue records each one as it is
/// delivered, and ``MotionActivityClassifier`` reads the last. Nothing is asked of the
/// platform until the first read: then `start` chooses the source
/// (``MotionActivityPolicy/source(motionAvailable:authorization:)``) and, for `.motion`,
/// begins the updates — so the motion permission is asked only once classification is on.
public final class MotionActivityFeed: Sendable {
    private struct State {
        var latest: MotionActivity?
        var source: MotionActivityPolicy.Source?
    }

    private let state = Locked(State())
    private let clock: any BeekonClock
    /// Kept for the feed's lifetime: it holds whatever delivers the updates.
    private let start: @Sendable (MotionActivityFeed) -> MotionActivityPolicy.Source

    /// Creates a feed stamping estimates with `clock`; `start` is called once, on the first
    /// ``latest()``, and returns the source it chose (`.motion`: it now calls ``record(_:)``).
    public init(clock: any BeekonClock, start: @escaping @Sendable (MotionActivityFeed) -> MotionActivityPolicy.Source) {
        self.clock = clock
        self.start = start
    }

    /// The source `start` chose; nil before the first read.
    public var source: MotionActivityPolicy.Source? { state.withLock { $0.source } }

    /// Records an estimate (its `receivedAt` is set to the clock's time).
    public func record(_ activity: MotionActivity) {
        var stamped = activity
        stamped.receivedAt = clock.now()
        state.withLock { $0.latest = stamped }
    }

    /// The last estimate, if any (always nil when the source is the fix stream); the first
    /// call chooses the source.
    public func latest() -> MotionActivity? {
        if state.withLock({ $0.source }) == nil {
            let chosen = start(self)
            state.withLock { s in
                if s.source == nil { s.source = chosen }
            }
        }
        return state.withLock { $0.source == .motion ? $0.latest : nil }
    }
}
