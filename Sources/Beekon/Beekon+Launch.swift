import BeekonPrimitives
import Foundation

extension Beekon {
    /// Resumes the persisted session on the first use of an instance whose dependencies
    /// ask for it (`resumesOnFirstUse`, on for `Beekon.shared` on Apple platforms): an app
    /// the OS relaunched (significant-location change, region event, background refresh)
    /// continues the same session without any call from the host app (LC-6, BY-10). Runs
    /// once per process, when the database is first opened; a resume the source refuses
    /// ends as `stopped(reason)` and is logged, never thrown at an unrelated call.
    func decideLaunch(store: LocationStore) async {
        let alreadyDecided = opening.launchDecided
        opening.launchDecided = true  // before any suspension: a concurrent first use must not decide again
        guard deps.resumesOnFirstUse, !alreadyDecided else { return }
        let intent: UUID?
        do { intent = try await store.trackingIntent() } catch {
            logger.error("could not read the tracking intent at launch", metadata: ["error": "\(error)"])
            return
        }
        let plan = LaunchPlan.decide(
            autoResume: deps.resumesOnFirstUse, alreadyDecided: alreadyDecided,
            tracking: core.machine.session, persistedIntent: intent)
        guard case .resume = plan else { return }
        do {
            try await resumeIfNeeded()
        } catch {
            logger.error("could not resume the persisted session at launch", metadata: ["error": "\(error)"])
        }
    }

    /// Opens the database (and so auto-resumes, when enabled) in the background the first
    /// time a stream is subscribed to: `for await s in Beekon.shared.state` is a first use.
    nonisolated func touchOnFirstSubscription() {
        guard deps.resumesOnFirstUse, firstSubscription.claim() else { return }
        Task { _ = try? await self.ready() }
    }
}

extension Beekon {
    /// The host's launch call: make it from `application(_:didFinishLaunchingWithOptions:)` or
    /// the SwiftUI `App` initialiser, on every launch (foreground or background). It is
    /// synchronous on purpose: when a session was being tracked (the persisted intent, LC-6)
    /// it retakes CoreLocation's background activity and service sessions before launch
    /// returns — Apple: an active session "may be resumed immediately … when the app is next
    /// run, even in the background", and "such a session which is not resumed immediately on
    /// next run will end" (`CLBackgroundActivitySession.h`, XR-1). Then it registers the
    /// background refresh (``registerBackgroundTasks()``) and starts the launch decision,
    /// which resumes the session (BY-10). Returns whether a session is being resumed.
    @discardableResult
    public nonisolated func launch() -> Bool {
        let resuming = deps.resumesOnFirstUse && LocationStore.peekTrackingIntent(path: deps.databasePath) != nil
        if resuming { deps.provider.retakeSessionsAtLaunch() }
        registerBackgroundTasks()
        return resuming
    }

    /// Registers the SDK's background refresh (`BGAppRefresh`, identifier
    /// `BeekonDependencies.backgroundRefreshIdentifier`, `dev.beekon.refresh` by default, which
    /// Info.plist must list under `BGTaskSchedulerPermittedIdentifiers`) and makes the launch
    /// decision (auto-resume). A refresh that cannot be scheduled is reported in the diagnostic log.
    /// ``launch()`` calls it; call it yourself only if you do not call `launch()`, from
    /// `application(_:didFinishLaunchingWithOptions:)` — iOS requires the registration before
    /// launch finishes. Idempotent: the handler is registered once per process (a second
    /// registration of an identifier ends the app), later calls return the first result.
    /// Returns whether the handler is registered; on other platforms it only makes the launch
    /// decision and returns false.
    @discardableResult
    public nonisolated func registerBackgroundTasks() -> Bool {
        Task { _ = try? await self.ready() }
        #if (canImport(BackgroundTasks) && os(iOS))
            let registered = BackgroundTaskRegistry.shared.register(deps.backgroundRefreshIdentifier) {
                BackgroundRefreshScheduler.register(self)
            }
            Task { await BackgroundRefreshScheduler.schedule(self) }
            return registered
        #else
            return false
        #endif
    }
}

extension Beekon {
    /// The `BGAppRefresh` identifier in use (the Apple glue's).
    package nonisolated var backgroundRefreshIdentifier: String { deps.backgroundRefreshIdentifier }

    /// Records a failure of the Apple glue in the log and the diagnostic log (BY-6).
    package nonisolated func logPlatformFailure(_ message: String) {
        logger.warning("\(message)")
    }
}

/// A flag that is claimed once, from any thread.
final class OnceFlag: Sendable {
    private let claimed = Locked(false)

    /// True for the first caller only.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}
