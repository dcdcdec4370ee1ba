// iOS only: the availability check of .ci/run reads this folder for macOS too.
#if canImport(UIKit)
    import Beekon
    import BeekonWire
    import UIKit

    /// What a real app does around the SDK at the UIKit level: the launch call before launch
    /// finishes (every launch, the background relaunches included), the APNs token handed to the SDK
    /// on every launch, and each silent push forwarded to `handleRemoteNotification`, whose answer
    /// goes to the system's completion handler.
    final class AppDelegate: NSObject, UIApplicationDelegate {
        /// The screen's model, shared with the window.
        let model = TrackerModel()

        func application(
            _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]? = nil
        ) -> Bool {
            // Synchronous and first: it retakes CoreLocation's sessions "immediately" on a relaunch
            // and registers the background refresh task (dev.beekon.refresh) before launch ends.
            Beekon.shared.launch()
            // A silent push needs no permission prompt, only the aps-environment entitlement.
            application.registerForRemoteNotifications()
            let options = TrackerModel.LaunchOptions(environment: ProcessInfo.processInfo.environment)
            let model = model
            Task { await model.apply(options) }
            return true
        }

        func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
            let model = model
            Task {
                let registered = await Beekon.shared.setPushToken(deviceToken, environment: Self.pushEnvironment)
                model.pushRegistered(registered)
            }
        }

        func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
            model.pushFailed(error)
        }

        func application(
            _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
            fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
        ) {
            // Not a Beekon payload: nil, answered `.notBeekon` at once (an app with pushes of its
            // own handles them here instead).
            let push = WireLocatePush(userInfo: userInfo)
            Task {
                switch await Beekon.shared.handleRemoteNotification(push) {
                case .newData: completionHandler(.newData)
                case .noData, .notBeekon: completionHandler(.noData)
                case .failed: completionHandler(.failed)
                }
            }
        }

        /// Development-signed builds (Xcode's Run) get sandbox tokens; archives for TestFlight and
        /// the App Store get production ones (the entitlement's value is set by the signing).
        private static var pushEnvironment: PushEnvironment {
            #if DEBUG
                .sandbox
            #else
                .production
            #endif
        }
    }
#endif
