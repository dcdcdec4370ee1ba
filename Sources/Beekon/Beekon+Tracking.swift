import Foundation

extension Beekon {
    /// Enters tracking with `session`, running the machine's actions. On failure the
    /// state is restored (storage) or becomes `stopped(reason)` (source), and it throws.
    func begin(session: UUID, resumeFrom: GatePoint?) async throws(BeekonError) {
        let previous = machine.phase
        let actions = machine.start(session: session, resumeFrom: resumeFrom)
        for action in actions {
            switch action {
            case .persistIntent(let session):
                do {
                    try await ready().beginSession(session, at: deps.clock.now())
                } catch {
                    machine.abortStart(restoring: previous)
                    throw error
                }
            case .startProvider(let mode):
                do {
                    try await startProvider(mode: mode)
                } catch {
                    let failure = error as? LocationProviderError ?? .failed("\(error)")
                    logger.error("location source failed to start", metadata: ["error": "\(failure)"])
                    await perform(machine.providerFailed(failure))
                    switch failure {
                    case .permissionDenied: throw .permissionDenied
                    case .servicesDisabled(let why), .failed(let why): throw .locationServicesDisabled(why)
                    }
                }
            default:
                await perform([action])
            }
        }
    }

    private func startProvider(mode: PowerMode) async throws {
        runGeneration += 1
        let generation = runGeneration
        sourceEnded = false
        let stream = try await deps.provider.start(mode: mode)
        consumeTask = Task { [weak self] in
            do {
                for try await fix in stream {
                    guard let self else { return }
                    await self.receive(fix, generation: generation)
                }
                await self?.sourceFinished(generation: generation, error: nil)
            } catch {
                await self?.sourceFinished(generation: generation, error: error)
            }
        }
    }

    /// One raw fix from the source: sanitise, flag, gate, store, then emit (ST-1, FX-7).
    func receive(_ raw: RawFix, generation: Int) async {
        guard generation == runGeneration else { return }
        stats.received += 1
        switch machine.decide(raw, id: deps.makeID()) {
        case .notTracking:
            return
        case .invalid:
            stats.invalid += 1
        case .rejected(let why):
            switch why {
            case .notLater: stats.notLater += 1
            case .tooSoon: stats.tooSoon += 1
            case .tooClose: stats.tooClose += 1
            case .admit: break
            }
        case .admit(let location):
            do {
                let trimmed = try await ready().insert(location)
                stats.trimmed += trimmed
                stats.stored += 1
                machine.committed(location)
                positionBroadcast.publish(location)
                await syncEngine?.fixStored()
            } catch {
                stats.storeFailures += 1
                stats.lastError = error
                logger.error("could not store a fix; tracking continues", metadata: ["error": "\(error)"])
            }
            await pruneIfDue()
        }
    }

    private func sourceFinished(generation: Int, error: (any Error)?) async {
        guard generation == runGeneration else { return }
        if let error {
            let failure = error as? LocationProviderError ?? .failed("\(error)")
            logger.error("location source failed", metadata: ["error": "\(failure)"])
            await perform(machine.providerFailed(failure))
        } else {
            logger.info("location source ended")
        }
        sourceEnded = true
        let waiters = sourceEndWaiters
        sourceEndWaiters = []
        for w in waiters { w.resume() }
    }

    /// Age prune with the first stored fix of a run, then at most hourly (clock time).
    /// Not at start: a replay's clock reads real time until its first fix, and pruning
    /// then would judge recorded rows by today's date (SRC-4).
    func pruneIfDue() async {
        let now = deps.clock.now()
        if let lastPrune, now.timeIntervalSince(lastPrune) < 3600, now >= lastPrune { return }
        lastPrune = now
        do {
            _ = try await ready().pruneByAge(now: now, maxAge: LocationStore.localOnlyMaxAge)
        } catch {
            logger.error("age prune failed", metadata: ["error": "\(error)"])
        }
    }

    /// Runs actions best-effort (errors are logged): used where no caller can take a throw.
    func perform(_ actions: [TrackingMachine.Action]) async {
        do { try await performThrowing(actions) } catch {
            logger.error("could not persist a state change", metadata: ["error": "\(error)"])
        }
    }

    /// Runs every action; the first storage error is thrown after all have run.
    func performThrowing(_ actions: [TrackingMachine.Action]) async throws(BeekonError) {
        var firstError: BeekonError?
        for action in actions {
            do {
                try await run(action)
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        if let firstError { throw firstError }
    }

    private func run(_ action: TrackingMachine.Action) async throws(BeekonError) {
        switch action {
        case .persistIntent(let session):
            try await ready().beginSession(session, at: deps.clock.now())
        case .startProvider(let mode):
            do { try await startProvider(mode: mode) } catch {
                throw .locationServicesDisabled("\(error)")
            }
        case .setPowerMode(let mode):
            await deps.provider.setPowerMode(mode)
        case .stopProvider:
            // Stopping the provider ends its stream; the generation bump makes any fix still
            // in flight a no-op. The consume task is not cancelled: this action may run on it
            // (a source failure), and the writes that follow must not see a cancelled task.
            runGeneration += 1
            consumeTask = nil
            await deps.provider.stop()
            sourceEnded = true
            let waiters = sourceEndWaiters
            sourceEndWaiters = []
            for w in waiters { w.resume() }
        case .clearIntent:
            try await ready().clearIntent()
        case .closeSession(let session, let reason):
            try await ready().endSession(session, reason: reason, at: deps.clock.now(), clearIntent: false)
        case .emitState(let state):
            logger.info("state changed", metadata: ["state": "\(state)"])
            stateBroadcast.publish(state)
        }
    }
}
