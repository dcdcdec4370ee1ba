/// When a ranging wake begins (SPEC BY-5), platform-neutral: iOS lets an app range for
/// about 10 s after a beacon-region event (extendable to about 180 s with a background
/// task), so the wakes follow the events that grant that time.
///
/// - `didEnterRegion`, `didExitRegion`, `didDetermineState` inside, and entering the background
///   begin a wake: the beacon document (reference 003) grants fresh background time on any region
///   transition, and an exit is when the beacons seen are leaving: ranging then records their
///   exits with distances instead of waiting for a later wake's silence timeout;
/// - `didDetermineState` outside or unknown does not (no transition, nothing to range);
/// - while a wake runs no other begins (it already ranges every constraint).
public struct RangingWakePlan: Sendable, Equatable {
    /// What the platform reported.
    public enum Event: Sendable, Equatable {
        /// `locationManager(_:didEnterRegion:)` for a beacon region.
        case didEnterRegion(String)
        /// `locationManager(_:didExitRegion:)` for a beacon region.
        case didExitRegion(String)
        /// `locationManager(_:didDetermineState:for:)`: inside (true), outside (false) or unknown (nil).
        case didDetermineState(String, inside: Bool?)
        /// The app entered the background (`UIApplication.didEnterBackgroundNotification`).
        case enteredBackground
    }

    /// Whether a wake is running.
    public private(set) var waking = false

    /// Creates the plan (no wake running).
    public init() {}

    /// Whether `event` begins a wake now; if so the plan counts it as running until ``wakeEnded()``.
    public mutating func begins(on event: Event) -> Bool {
        guard !waking else { return false }
        switch event {
        case .didEnterRegion, .didExitRegion, .enteredBackground, .didDetermineState(_, inside: true?): waking = true
        case .didDetermineState: return false
        }
        return true
    }

    /// The running wake ended.
    public mutating func wakeEnded() {
        waking = false
    }
}
