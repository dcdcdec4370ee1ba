import BeekonPrimitives

/// The app's `UIBackgroundModes` (Info.plist), judged before any background location API is
/// used (XR-1). `CLLocationManager.h` (iOS 18 SDK) on `allowsBackgroundLocationUpdates`:
/// "Setting this property to YES when UIBackgroundModes does not include \"location\" is a
/// fatal error."; `CLBackgroundActivitySession.h`: "A session may only be active for an app which
/// includes Location in its UIBackgroundModes". So the SDK reads the bundle and refuses to
/// start with a clear error instead of trapping the host.
package struct BackgroundModes: Sendable, Hashable {
    /// The values listed (empty when the key is missing or not an array of strings).
    package var modes: Set<String>

    /// The `UIBackgroundModes` value as read from the bundle's info dictionary.
    package init(infoValue: Any?) {
        modes = Set((infoValue as? [Any] ?? []).compactMap { $0 as? String })
    }

    /// Whether background location is declared (`location`).
    package var allowsBackgroundLocation: Bool { modes.contains("location") }

    /// The error `start()` fails with when background location is not declared, else nil.
    package var startRefusal: LocationProviderError? {
        guard !allowsBackgroundLocation else { return nil }
        return .failed(
            "Info.plist lacks UIBackgroundModes \"location\": add it (Signing & Capabilities → Background Modes → "
                + "Location updates) before calling start(); background tracking cannot run without it")
    }
}

/// Registers background-task launch handlers at most once per identifier per process (XR-1):
/// Apple documents `BGTaskScheduler.register(forTaskWithIdentifier:using:launchHandler:)` as a
/// once-per-identifier call made before launch finishes, and a second registration of the same
/// identifier raises an exception that ends the app. A second `registerBackgroundTasks()`
/// returns the first registration's result without calling the system again.
package final class BackgroundTaskRegistry: Sendable {
    private let results = Locked([String: Bool]())

    /// The process's registry.
    package static let shared = BackgroundTaskRegistry()

    /// A registry (tests make their own).
    package init() {}

    /// Runs `register` for `identifier` the first time only; returns its result every time.
    package func register(_ identifier: String, _ register: () -> Bool) -> Bool {
        results.withLock { results in
            if let done = results[identifier] { return done }
            let done = register()
            results[identifier] = done
            return done
        }
    }
}
