import Beekon
import Foundation

/// What a ranging wake needs from the platform (SPEC BY-5): CoreLocation on iOS
/// (`CoreLocationBeaconRanger`), a script in tests.
public protocol BeaconRangingControl: Sendable {
    /// Starts ranging every constraint; called once the wake's lease is granted.
    func startRanging() async
    /// Stops ranging; called before the wake's lease ends.
    func stopRanging() async
    /// The next ranged reading (nil when the calling task is cancelled or ranging ended).
    func nextReading() async -> BeaconReading?
}

/// Region events and app-state changes turned into ranging wakes (SPEC BY-5), platform-neutral:
/// ``RangingWakePlan`` decides when a wake begins; ``BeaconRangingSession`` runs it within the
/// ``ExecutionBudget`` (on iOS a UIKit background task) and persists the decision state, so
/// the next wake continues; ranging starts once the lease is granted and stops before the
/// lease ends; each proximity event is handed to `record` (the SDK stores and uploads it) as
/// it is decided, before the lease ends.
public actor BeaconWakeCoordinator {
    private var plan = RangingWakePlan()
    private let session: BeaconRangingSession
    private let control: any BeaconRangingControl
    private let record: @Sendable ([ProximityEvent]) async -> Void

    /// Creates a coordinator; `budget` grants each wake's time, `store` keeps the state between wakes.
    public init(
        tracker: ProximityTracker, budget: any ExecutionBudget, clock: any BeekonClock,
        window: ExecutionWindow = ExecutionWindow(), store: any RangingStateStore, control: any BeaconRangingControl,
        record: @escaping @Sendable ([ProximityEvent]) async -> Void
    ) {
        self.control = control
        self.record = record
        session = BeaconRangingSession(
            tracker: tracker, budget: RangingLeaseBudget(base: budget, control: control), clock: clock, window: window,
            store: store)
    }

    /// Whether a wake is running.
    public var waking: Bool { plan.waking }

    /// Handles one platform event: when it begins a wake, runs it to its end and returns it;
    /// nil when the event begins none (a wake is already running, or nothing to range).
    public func receive(_ event: RangingWakePlan.Event) async -> BeaconRangingSession.Wake? {
        guard plan.begins(on: event) else { return nil }
        let control = self.control
        let wake = await session.wake(onEvents: record) { await control.nextReading() }
        plan.wakeEnded()
        return wake
    }
}

/// The wake's budget: ranging runs exactly while the host's lease does.
private struct RangingLeaseBudget: ExecutionBudget {
    let base: any ExecutionBudget
    let control: any BeaconRangingControl

    func beginLease(named name: String) async -> any ExecutionLease {
        let lease = await base.beginLease(named: name)
        await control.startRanging()
        return Lease(base: lease, control: control)
    }

    struct Lease: ExecutionLease {
        let base: any ExecutionLease
        let control: any BeaconRangingControl
        func remaining() async -> Duration? { await base.remaining() }
        func end() async {
            await control.stopRanging()
            await base.end()
        }
    }
}
