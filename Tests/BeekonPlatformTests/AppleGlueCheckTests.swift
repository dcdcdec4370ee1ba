#if os(Linux)
    import Beekon
    import BeekonAppleGlueCheck
    import Testing

    /// The Apple glue (Sources/Beekon/Platform/Apple) is compiled on Linux against the
    /// CoreLocation / UIKit / BackgroundTasks shims by the `BeekonAppleGlueCheck` target, which
    /// this test target depends on: a shim signature the glue does not match fails the build
    /// of the tests. Nothing here runs CoreLocation (the shims trap); this checks the glue's
    /// public surface is what `Beekon.shared` uses on Apple platforms.
    @Suite("Apple glue type-check")
    struct AppleGlueCheckTests {
        @Test func theAppleDependenciesUseTheCoreLocationProviderAndAutoResume() {
            let deps = BeekonDependencies.apple(databasePath: "/tmp/unused.sqlite")
            #expect(deps.provider is CoreLocationProvider)
            #expect(deps.resumesOnFirstUse)
            #expect(deps.executionBudget is BackgroundTaskBudget)
            // BY-4: the UIKit lifecycle and CoreMotion's activity (nothing is asked of either until used).
            #expect(deps.appLifecycle is UIKitLifecycleSource)
            #expect((deps.activityClassifier as? MotionActivityClassifier)?.feed.source == nil)
        }
    }
#endif
