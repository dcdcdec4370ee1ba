#if (canImport(UIKit) && os(iOS)) || BEEKON_APPLE_SHIM
    import Foundation
    import UIKit
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// The iOS execution budget: each lease is a UIKit background task
    /// (`beginBackgroundTask(withName:expirationHandler:)`), its remaining time is
    /// `backgroundTimeRemaining` (unlimited in the foreground, see ``BackgroundTime``), and
    /// the task is ended when the work ends or, at the latest, in UIKit's expiration handler
    /// (an app still holding an expired task is killed).
    public struct BackgroundTaskBudget: ExecutionBudget {
        /// Creates the budget.
        public init() {}

        /// Begins a UIKit background task named `name`.
        public func beginLease(named name: String) async -> any ExecutionLease {
            await MainActor.run {
                let lease = BackgroundTaskLease()
                lease.identifier = UIApplication.shared.beginBackgroundTask(withName: name) { [lease] in
                    MainActor.assumeIsolated { lease.endOnMain() }  // UIKit calls it on the main thread
                }
                return lease
            }
        }
    }

    /// One UIKit background task.
    @MainActor
    final class BackgroundTaskLease: ExecutionLease {
        var identifier: UIBackgroundTaskIdentifier = .invalid

        nonisolated func remaining() async -> Duration? {
            await MainActor.run { BackgroundTime.remaining(seconds: UIApplication.shared.backgroundTimeRemaining) }
        }

        nonisolated func end() async {
            await MainActor.run { endOnMain() }
        }

        /// `endBackgroundTask(_:)`, once.
        func endOnMain() {
            guard identifier != .invalid else { return }
            UIApplication.shared.endBackgroundTask(identifier)
            identifier = .invalid
        }
    }
#endif
