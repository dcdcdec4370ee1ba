#if (canImport(CoreLocation) && !os(Linux)) || BEEKON_APPLE_SHIM
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    extension BeekonDependencies {
        /// Apple-platform dependencies: the CoreLocation provider, the Keychain vault (chosen
        /// by default for the database), the UIKit background-task budget on iOS, and
        /// auto-resume of a persisted session on first use.
        public static func apple(databasePath: String) -> BeekonDependencies {
            #if os(iOS) || BEEKON_APPLE_SHIM
                let budget: any ExecutionBudget = BackgroundTaskBudget()
            #else
                let budget: any ExecutionBudget = UnlimitedExecutionBudget()
            #endif
            return BeekonDependencies(
                databasePath: databasePath, provider: CoreLocationProvider(),
                executionBudget: budget, resumesOnFirstUse: true)
        }
    }
#endif
