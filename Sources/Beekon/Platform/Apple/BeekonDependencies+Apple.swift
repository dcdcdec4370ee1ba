#if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    extension BeekonDependencies {
        /// Apple-platform dependencies: the CoreLocation provider, the Keychain vault (chosen
        /// by default for the database), auto-resume of a persisted session on first use, and
        /// on iOS the UIKit background-task budget, the app lifecycle switching the profile
        /// (`BeekonConfig.followsAppLifecycle`), the battery for the locate guard and CoreMotion's activity where the device has
        /// it (`MotionActivityClassifier.coreMotion(clock:)`).
        public static func apple(databasePath: String) -> BeekonDependencies {
            #if os(iOS) || BEEKON_APPLE_SHIM
                let budget: any ExecutionBudget = BackgroundTaskBudget()
            #else
                let budget: any ExecutionBudget = UnlimitedExecutionBudget()
            #endif
            var dependencies = BeekonDependencies(
                databasePath: databasePath, provider: CoreLocationProvider(),
                executionBudget: budget, resumesOnFirstUse: true)
            #if os(iOS) || BEEKON_APPLE_SHIM
                dependencies.appLifecycle = UIKitLifecycleSource()
                dependencies.powerState = UIKitPowerStateSource()
                dependencies.activityClassifier = MotionActivityClassifier.coreMotion(clock: dependencies.clock)
            #endif
            return dependencies
        }
    }
#endif
