#if (canImport(CoreMotion) && os(iOS)) || BEEKON_APPLE_SHIM
    import BeekonPrimitives
    import CoreMotion
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// CoreMotion's activity updates feeding a ``MotionActivityFeed`` (BY-4): one CoreMotion
    /// call per method, no decisions (``MotionActivityPolicy`` makes them). The feed keeps this
    /// object, and so the manager (whose deallocation would stop the updates), for the SDK's
    /// lifetime. iOS only: macOS has no activity updates, so it keeps the fix-stream classifier.
    final class MotionActivityUpdates: Sendable {
        private let manager = Locked<CMMotionActivityManager?>(nil)

        /// `CMMotionActivityManager.isActivityAvailable()` and `authorizationStatus()`,
        /// judged by ``MotionActivityPolicy/source(motionAvailable:authorization:)``.
        static var source: MotionActivityPolicy.Source {
            MotionActivityPolicy.source(
                motionAvailable: CMMotionActivityManager.isActivityAvailable(),
                authorization: MotionActivityPolicy.Authorization(CMMotionActivityManager.authorizationStatus()))
        }

        /// `startActivityUpdates(to:withHandler:)` on the main queue, each estimate recorded in `feed`.
        func start(into feed: MotionActivityFeed) {
            let made = CMMotionActivityManager()
            manager.value = made
            made.startActivityUpdates(to: .main) { activity in
                if let activity { feed.record(activity.beekonValue) }
            }
        }
    }

    extension MotionActivityClassifier {
        /// The classifier `BeekonDependencies.apple` uses on iOS: at the first classified fix
        /// it asks ``MotionActivityUpdates/source``; `.motion` starts CoreMotion's updates
        /// (when iOS asks for the Motion & Fitness permission), else every fix is classified
        /// by `SpeedActivityClassifier`, which sees every fix either way.
        public static func coreMotion(clock: any BeekonClock = SystemClock()) -> MotionActivityClassifier {
            let updates = MotionActivityUpdates()
            return MotionActivityClassifier(
                feed: MotionActivityFeed(clock: clock) { feed in
                    let source = MotionActivityUpdates.source
                    if source == .motion { updates.start(into: feed) }
                    return source
                })
        }
    }

    extension MotionActivity {
        /// Reads a `CMMotionActivity` (its `receivedAt` is set by the feed).
        init(_ activity: CMMotionActivity) {
            self.init(
                confidence: Confidence(rawValue: activity.confidence.rawValue) ?? .low, startDate: activity.startDate,
                receivedAt: activity.startDate)
            stationary = activity.stationary
            walking = activity.walking
            running = activity.running
            cycling = activity.cycling
            automotive = activity.automotive
            unknown = activity.unknown
        }
    }

    extension CMMotionActivity {
        /// The platform-neutral value.
        var beekonValue: MotionActivity { MotionActivity(self) }
    }

    extension MotionActivityPolicy.Authorization {
        /// Reads a `CMAuthorizationStatus`; a future case is taken as not determined.
        init(_ status: CMAuthorizationStatus) {
            switch status {
            case .restricted: self = .restricted
            case .denied: self = .denied
            case .authorized: self = .authorized
            case .notDetermined: self = .notDetermined
            @unknown default: self = .notDetermined
            }
        }
    }
#endif
