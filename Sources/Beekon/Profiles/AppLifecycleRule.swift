import Foundation

/// How lifecycle events become app states (BY-4), as a value type:
/// - `willEnterForeground` and `didBecomeActive` → foreground, at once (the user is looking);
/// - `didEnterBackground` → background once it has held for ``backgroundSettle`` (a quick
///   trip to the app switcher and back switches nothing);
/// - `launched(inBackground:)` → that state at once;
/// - nothing when the state is already the current one, or when the host opted out
///   (`BeekonConfig.followsAppLifecycle` false: it calls `setAppState` itself).
package struct AppLifecycleRule: Sendable, Equatable {
    /// What to do after an event.
    package enum Action: Sendable, Equatable {
        /// Nothing.
        case none
        /// Switch to this state now.
        case apply(AppState)
        /// Call ``settled(at:current:follows:)`` after this long.
        case settle(after: Duration)
    }

    /// How long a background entry must hold before the profile switches (default 1 s).
    package var backgroundSettle: Duration = .seconds(1)
    /// When the pending background entry happened; nil when none is pending.
    package private(set) var backgroundSince: Date?

    /// Creates the rule.
    package init() {}

    /// The action for `event` at `now`, given the `current` state and whether the host lets
    /// the SDK follow the lifecycle.
    package mutating func receive(_ event: AppLifecycleEvent, at now: Date, current: AppState, follows: Bool) -> Action {
        guard follows else {
            backgroundSince = nil
            return .none
        }
        switch event {
        case .launched(let inBackground):
            backgroundSince = nil
            let state: AppState = inBackground ? .background : .foreground
            return state == current ? .none : .apply(state)
        case .willEnterForeground, .didBecomeActive:
            backgroundSince = nil
            return current == .foreground ? .none : .apply(.foreground)
        case .didEnterBackground:
            guard current != .background else { return .none }
            backgroundSince = now
            return .settle(after: backgroundSettle)
        }
    }

    /// The state to switch to when a settle period ends at `now`: background when the entry is
    /// still pending and has held long enough, else nil.
    package mutating func settled(at now: Date, current: AppState, follows: Bool) -> AppState? {
        guard let since = backgroundSince, now.timeIntervalSince(since) >= backgroundSettle.seconds else { return nil }
        backgroundSince = nil
        return follows && current != .background ? .background : nil
    }
}
