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
            tracking: machine.session, persistedIntent: intent)
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
    /// Registers the SDK's background refresh (`BGAppRefresh`, identifier
    /// `dev.beekon.refresh`, which Info.plist must list under
    /// `BGTaskSchedulerPermittedIdentifiers`) and makes the launch decision (auto-resume).
    /// Call it from `application(_:didFinishLaunchingWithOptions:)` — iOS requires the
    /// registration before launch finishes. Returns whether the handler was registered;
    /// on other platforms it only makes the launch decision and returns false.
    @discardableResult
    public nonisolated func registerBackgroundTasks() -> Bool {
        Task { _ = try? await self.ready() }
        #if (canImport(BackgroundTasks) && os(iOS))
            let registered = BackgroundRefreshScheduler.register(self)
            Task { await BackgroundRefreshScheduler.schedule(self) }
            return registered
        #else
            return false
        #endif
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
