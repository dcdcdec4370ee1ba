#if (canImport(BackgroundTasks) && os(iOS)) || BEEKON_APPLE_SHIM
    import BackgroundTasks
    import Foundation
    #if BEEKON_APPLE_SHIM
        import Beekon
    #endif

    /// BGAppRefresh for the interval upload trigger: registers the launch handler (the host
    /// app calls `Beekon.registerBackgroundTasks()` before its launch finishes), asks for the
    /// next refresh as ``BackgroundRefreshPlan`` says, and in a granted refresh records the
    /// stationary check-in that fell due and runs one `sync()` (which takes its own
    /// background-task lease), then completes the task.
    enum BackgroundRefreshScheduler {
        /// `BGTaskScheduler.register(forTaskWithIdentifier:using:launchHandler:)`.
        static func register(_ beekon: Beekon) -> Bool {
            BGTaskScheduler.shared.register(forTaskWithIdentifier: beekon.backgroundRefreshIdentifier, using: nil) { task in
                let granted = GrantedTask(task: task)
                let work = Task {
                    await schedule(beekon)
                    await beekon.performBackgroundRefresh()
                    granted.task.setTaskCompleted(success: true)
                }
                task.expirationHandler = { work.cancel() }
            }
        }

        /// A granted `BGTask`; `setTaskCompleted(success:)` may be called from any thread.
        private struct GrantedTask: @unchecked Sendable { let task: BGTask }

        /// `BGTaskScheduler.submit(_:)` for the next refresh, when sync or check-ins need one; a
        /// refusal goes to the diagnostic log with what to fix (``BackgroundRefreshPlan/submitFailure(code:)``).
        static func schedule(_ beekon: Beekon) async {
            let config = try? await beekon.configuration()
            let plan = BackgroundRefreshPlan(
                syncIntervalSeconds: config?.sync?.effectiveIntervalSeconds,
                checkInIntervalSeconds: config?.declaredCheckInIntervalSeconds.map(Double.init),
                identifier: beekon.backgroundRefreshIdentifier)
            guard let earliest = plan.nextRequest(now: Date()) else { return }
            let request = BGAppRefreshTaskRequest(identifier: plan.identifier)
            request.earliestBeginDate = earliest
            do { try BGTaskScheduler.shared.submit(request) } catch {
                beekon.logPlatformFailure(plan.submitFailure(code: (error as NSError).code))
            }
        }
    }
#endif
