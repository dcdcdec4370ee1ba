/// What the host platform says about the app's lifecycle (BY-4), platform-neutral: the
/// Apple glue maps UIKit's notifications to these; `AppLifecycleRule` decides the app state.
public enum AppLifecycleEvent: Sendable, Hashable {
    /// The state the app was launched in (`UIApplication.applicationState` when observing
    /// begins): an app relaunched by the OS for a location event starts in the background.
    case launched(inBackground: Bool)
    /// `UIApplication.willEnterForegroundNotification`: on its way to the screen.
    case willEnterForeground
    /// `UIApplication.didBecomeActiveNotification`: on screen and receiving events.
    case didBecomeActive
    /// `UIApplication.didEnterBackgroundNotification`: off screen.
    case didEnterBackground
}

/// Where an SDK instance hears the app's lifecycle (BY-4): on iOS the UIKit notifications
/// (`BeekonDependencies.apple` sets `UIKitLifecycleSource`); none elsewhere, where the host
/// calls `Beekon.setAppState(_:)` itself (macOS apps, the Linux agent).
public protocol AppLifecycleSource: Sendable {
    /// The events from now on, the first one `launched(inBackground:)`.
    func events() async -> AsyncStream<AppLifecycleEvent>
}
