import Beekon
import Foundation

/// Ranging within the host's background-time budget (SPEC BY-5): each wake (a region event,
/// entering the background) begins an ``ExecutionLease``, loads the persisted decision state,
/// ranges while the lease's time minus the ``ExecutionWindow`` safety margin remains, then
/// persists the state and ends the lease before expiry. On Linux the budget is unlimited and
/// a wake lasts until the readings end.
public actor BeaconRangingSession {
    /// Why a wake stopped.
    public enum Stop: Sendable, Equatable {
        /// The allowance ran out: stopped a safety margin before the host's expiry.
        case budget
        /// The readings ended.
        case sourceEnded
    }

    /// What one wake did.
    public struct Wake: Sendable {
        /// The events decided in this wake (already persisted with the state).
        public var events: [ProximityEvent]
        /// Readings consumed.
        public var readings: Int
        /// Why it stopped.
        public var stop: Stop
        /// The clock's time when the lease was ended.
        public var endedAt: Date
    }

    private var tracker: ProximityTracker
    private let budget: any ExecutionBudget
    private let clock: any BeekonClock
    private let window: ExecutionWindow
    private let store: any RangingStateStore

    /// Creates a session; `tracker` gives the configuration (its state is replaced by the stored one at each wake).
    public init(
        tracker: ProximityTracker, budget: any ExecutionBudget, clock: any BeekonClock,
        window: ExecutionWindow = ExecutionWindow(), store: any RangingStateStore
    ) {
        self.tracker = tracker
        self.budget = budget
        self.clock = clock
        self.window = window
        self.store = store
    }

    /// Runs one wake over the readings `next` delivers (nil: no more), stopping when the
    /// allowance is spent even if no reading arrives. `onEvents`, if given, receives each
    /// reading's events as they are decided, while the lease still runs.
    public func wake(
        named name: String = "beekon.beacons", onEvents: (@Sendable ([ProximityEvent]) async -> Void)? = nil,
        next: @escaping @Sendable () async -> BeaconReading?
    ) async -> Wake {
        let lease = await budget.beginLease(named: name)
        let start = clock.now()
        if let saved = store.load() { tracker.state = saved }
        tracker.resumeListening(at: start)
        let deadline = await window.allowance(remaining: lease.remaining()).map { start.addingTimeInterval($0.seconds) }
        var events: [ProximityEvent] = []
        var count = 0
        var stop = Stop.sourceEnded
        while true {
            guard let reading = await nextBefore(deadline, next) else {
                stop = deadline.map { clock.now() >= $0 } == true ? .budget : .sourceEnded
                break
            }
            if let deadline, clock.now() >= deadline || reading.time >= deadline {
                stop = .budget
                break
            }
            count += 1
            let decided = tracker.observe(reading)
            if !decided.isEmpty {
                events += decided
                await onEvents?(decided)
            }
        }
        try? store.save(tracker.state)
        await lease.end()
        return Wake(events: events, readings: count, stop: stop, endedAt: clock.now())
    }

    /// The next reading, or nil when the readings end or `deadline` passes first.
    private func nextBefore(_ deadline: Date?, _ next: @escaping @Sendable () async -> BeaconReading?) async -> BeaconReading? {
        guard let deadline else { return await next() }
        let wait = deadline.timeIntervalSince(clock.now())
        guard wait > 0 else { return nil }
        let clock = self.clock
        return await withTaskGroup(of: BeaconReading?.self) { group in
            group.addTask { await next() }
            group.addTask {
                try? await clock.sleep(for: .seconds(wait))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

extension ProximityTracker {
    /// Starts a new listening period at `date`: time spent suspended does not count as silence
    /// (a beacon is silent only when it is not heard while the scanner listens).
    public mutating func resumeListening(at date: Date) {
        let time = date.timeIntervalSince1970
        for (key, var entry) in state.entries {
            entry.trigger.resumeListening(at: time)
            state.entries[key] = entry
        }
        state.nextSilence = state.entries.values.compactMap(\.trigger.silenceDeadline).min()
    }
}
