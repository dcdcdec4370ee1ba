import Foundation

/// The schedule of a paced replay (SRC-4): how long to wait in real time before delivering
/// the next recorded item, so items are delivered with their recorded gaps divided by the
/// ``ReplaySpeed``. Shared by the track replay (`ReplayProvider`) and the agent's beacon
/// replay, so `--speed` paces both alike.
///
/// Each recorded gap counts as at least 0 (time going backwards) and at most `maxGap`, so a
/// recording paused for hours does not stall a real-time replay. The first item after a
/// ``restart()`` is delivered at once and anchors the schedule.
public struct ReplayPacer: Sendable {
    /// The pacing.
    public let speed: ReplaySpeed
    /// The longest recorded gap honoured.
    public let maxGap: Duration

    private var previous: Date?
    private var offset: TimeInterval = 0
    private var anchor: (real: TimeInterval, offset: TimeInterval)?

    /// Creates a schedule at `speed`.
    public init(speed: ReplaySpeed, maxGap: Duration = .seconds(300)) {
        self.speed = speed
        self.maxGap = maxGap
    }

    /// Real seconds to wait, from `realNow`, before delivering an item recorded at `time`
    /// (≤ 0: due already); nil when not paced (`asFastAsPossible`, or the anchoring item).
    /// Call it once per item, in delivery order.
    public mutating func delay(before time: Date, realNow: Date) -> TimeInterval? {
        if let previous {
            let gap = time.timeIntervalSince(previous)
            offset += gap.isFinite ? min(max(gap, 0), max(0, maxGap.seconds)) : 0
        }
        previous = time
        guard let rate = speed.rate else { return nil }
        let real = realNow.timeIntervalSince1970
        guard let anchor else {
            anchor = (real, offset)
            return nil
        }
        return anchor.real + (offset - anchor.offset) / rate - real
    }

    /// Forgets the anchor: the next item is delivered at once (a stopped replay restarting).
    public mutating func restart() {
        anchor = nil
    }
}
