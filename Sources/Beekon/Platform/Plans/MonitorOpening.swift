/// When the provider opens its `CLMonitor` (iOS 17+), as a value (XR-1). `CLMonitor.h`
/// (iPhoneOS18.6.sdk): "Only one instance of `CLMonitor` with a given name may be opened at a
/// time", and "Apps need to observe when protected data becomes available using
/// `UIApplicationProtectedDataDidBecomeAvailable` before creating a `CLMonitor` instance" (its
/// conditions live in a file in the data container). So the monitor is opened once, by the
/// first request made while protected data is available; a request during the opening waits
/// for that one (an actor re-enters at the `await`, which used to open a second monitor), and a
/// request before protected data is available waits for it.
package struct MonitorOpening: Sendable, Hashable {
    /// What the caller does next.
    package enum Step: Sendable, Hashable {
        /// Open the monitor now (this caller is the only one told so), then call ``opened()``.
        case open
        /// Another caller is opening it: wait for that opening.
        case awaitOpening
        /// Protected data is not available: wait for `protectedDataDidBecomeAvailable`, then ask again.
        case awaitProtectedData
        /// The monitor is open: use it.
        case use
    }

    private enum State: Sendable, Hashable {
        case closed, opening, open
    }

    private var state = State.closed

    /// Nothing opened.
    package init() {}

    /// The step for a caller that needs the monitor, given whether protected data is available now.
    package mutating func request(protectedDataAvailable: Bool) -> Step {
        switch state {
        case .open: return .use
        case .opening: return .awaitOpening
        case .closed:
            guard protectedDataAvailable else { return .awaitProtectedData }
            state = .opening
            return .open
        }
    }

    /// The opening finished.
    package mutating func opened() {
        state = .open
    }
}
