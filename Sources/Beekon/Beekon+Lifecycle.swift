import Foundation

/// Following the app's lifecycle (BY-4): the events of `BeekonDependencies.appLifecycle`
/// switch the foreground/background profile through ``AppLifecycleRule``, unless the host
/// opted out with `BeekonConfig.followsAppLifecycle`.
extension Beekon {
    /// The rule's state and the task reading the events.
    struct LifecycleRun {
        var rule = AppLifecycleRule()
        var task: Task<Void, Never>?
        /// Whether the provider's health reports were asked for (once per process).
        var healthObserved = false
        /// Reads the provider's ``LocationHealth`` into ``Beekon/locationHealth``.
        var healthTask: Task<Void, Never>?
    }

    /// Starts publishing the provider's health reports, once.
    func observeLocationHealth() async {
        guard !lifecycle.healthObserved else { return }
        lifecycle.healthObserved = true
        guard let changes = await deps.provider.healthChanges() else { return }
        let broadcast = broadcasts.locationHealth
        let logger = logger
        lifecycle.healthTask = Task {
            for await health in changes where health != broadcast.current {
                logger.warning("location health changed", metadata: ["health": "\(health.rawValue)"])
                broadcast.publish(health)
            }
        }
    }

    /// Starts reading the lifecycle events, once (called when the database is first opened).
    func observeAppLifecycle() {
        guard lifecycle.task == nil, let source = deps.appLifecycle else { return }
        lifecycle.task = Task { [weak self] in
            for await event in await source.events() {
                guard let self else { return }
                await self.receiveLifecycle(event)
            }
        }
    }

    /// Applies one lifecycle event.
    package func receiveLifecycle(_ event: AppLifecycleEvent) async {
        let action = lifecycle.rule.receive(
            event, at: deps.clock.now(), current: core.pipeline.appState, follows: core.pipeline.base.followsAppLifecycle)
        switch action {
        case .none: return
        case .apply(let state): await followLifecycle(to: state)
        case .settle(let delay):
            let clock = deps.clock
            Task { [weak self] in
                guard (try? await clock.sleep(for: delay)) != nil else { return }
                await self?.lifecycleSettled()
            }
        }
    }

    private func lifecycleSettled() async {
        let state = lifecycle.rule.settled(
            at: deps.clock.now(), current: core.pipeline.appState, follows: core.pipeline.base.followsAppLifecycle)
        if let state { await followLifecycle(to: state) }
    }

    private func followLifecycle(to state: AppState) async {
        logger.debug("app lifecycle", metadata: ["app_state": "\(state.rawValue)"])
        do { try await setAppState(state) } catch {
            logger.error("could not follow the app lifecycle", metadata: ["error": "\(error)"])
        }
    }
}
