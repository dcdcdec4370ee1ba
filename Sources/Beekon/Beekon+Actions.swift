import Foundation

/// The interpreter of `TrackingMachine`'s lifecycle actions: every call site (start, resume,
/// stop, configure, shutdown, a source failure) runs them through `run(_:)`. A held fix the
/// lifecycle releases goes to the fix decider and its effects to `apply` (`Beekon+Fixes`).
extension Beekon {
    /// Runs actions best-effort (errors are logged): used where no caller can take a throw.
    func perform(_ actions: [TrackingMachine.Action]) async {
        do { try await performThrowing(actions) } catch {
            logger.error("could not persist a state change", metadata: ["error": "\(error)"])
        }
    }

    /// Runs the actions in order. The first error is thrown after all have run, or at once
    /// with `stoppingAtFirstError` (a start that failed leaves the rest undone).
    func performThrowing(_ actions: [TrackingMachine.Action], stoppingAtFirstError: Bool = false) async throws(BeekonError) {
        var firstError: BeekonError?
        for action in actions {
            do {
                try await run(action)
            } catch {
                if firstError == nil { firstError = error }
                if stoppingAtFirstError { break }
            }
        }
        // After the state is emitted and persisted: a waiter sees the final state.
        if source.ended { wakeSourceEndWaiters() }
        if let firstError { throw firstError }
    }

    private func run(_ action: TrackingMachine.Action) async throws(BeekonError) {
        switch action {
        case .persistIntent(let session):
            do {
                try await ready().beginSession(session, at: deps.clock.now())
            } catch {
                core.machine.abortStart()
                throw error
            }
        case .startProvider(let mode):
            do { try await startSource(mode: mode) } catch {
                let failure = error as? LocationProviderError ?? .failed("\(error)")
                logger.error("location source failed to start", metadata: ["error": "\(failure)"])
                await perform(core.machine.providerFailed(failure))
                switch failure {
                case .permissionDenied: throw .permissionDenied
                case .servicesDisabled(let why), .failed(let why): throw .locationServicesDisabled(why)
                }
            }
        case .setPowerMode(let mode):
            await tuneSource()
            await deps.provider.setPowerMode(mode)
        case .stopProvider:
            await stopSource()
        case .clearIntent:
            try await ready().clearIntent()
        case .closeSession(let session, let reason):
            try await ready().endSession(session, reason: reason, at: deps.clock.now(), clearIntent: false)
            // A stopped session flushes its tail at once, whatever stopped it (SY-3). A system stop
            // is the process ending: `shutdown()` stops the engine next, and the host's final
            // drain (the agent's `--drain-timeout`) or the next launch sends the tail.
            if reason != .system { await syncEngine?.wake(.sessionStopped) }
        case .emitState(let state):
            logger.info("state changed", metadata: ["state": "\(state)"])
            broadcasts.state.publish(state)
        case .store(let held):
            await apply(core.machine.decide(.windowClosed(held)))
        }
    }
}
