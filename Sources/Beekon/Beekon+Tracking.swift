import Foundation

extension Beekon {
    /// Enters tracking with `session`, running the machine's actions. On failure the
    /// state is restored (storage) or becomes `stopped(reason)` (source), and it throws.
    func begin(session: UUID, resumeFrom: GatePoint?) async throws(BeekonError) {
        let previous = machine.phase
        let actions = machine.start(session: session, resumeFrom: resumeFrom)
        if !actions.isEmpty { stationary.reset() }
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

    /// One raw fix from the source (ST-1, FX-7): sanitise; evaluate geofences and the
    /// stationary detector on every fix (before the gate); record a crossing (trigger
    /// `geofence`) or a return to motion (trigger `motion`) bypassing the gate, else gate
    /// it; store durably, then emit.
    func receive(_ raw: RawFix, generation: Int) async {
        guard generation == runGeneration, machine.session != nil else { return }
        stats.received += 1
        guard let sanitised = FixSanitiser.sanitise(raw) else {
            stats.invalid += 1
            return
        }
        let (fix, heartbeat) = pipelineStep(sanitised)  // activity, heartbeat (BY-4)
        var fences = geofenceEngine
        let crossing = fences.evaluateCrossings(
            latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy,
            timestamp: fix.timestamp, makeID: deps.makeID)
        let oldMotion = stationary.motion
        let actions = stationary.observe(fix: fix)
        var trigger = Trigger.interval
        if !crossing.events.isEmpty {
            trigger = .geofence
        } else if actions.contains(where: { if case .resumeProvider = $0 { true } else { false } }) {
            // Leaving the radius after a pause resumes tracking with a `motion` fix (FX-6);
            // under keepTracking nothing was paused and the gate decides as usual.
            trigger = .motion
        }
        let decision = machine.decide(
            fix, id: deps.makeID(), motion: stationary.motion, trigger: trigger,
            bypassGate: trigger != .interval || heartbeat)
        let records = crossing.events.map {
            GeofenceEventRecord(
                id: $0.id, geofenceId: $0.geofenceId, transition: $0.transition,
                timestamp: $0.timestamp, sessionId: machine.session)
        }
        switch decision {
        case .notTracking, .invalid:
            return
        case .rejected(let why):
            switch why {
            case .notLater: stats.notLater += 1
            case .tooSoon: stats.tooSoon += 1
            case .tooClose: stats.tooClose += 1
            case .admit, .turn: break
            }
            if !crossing.stateChanges.isEmpty {
                // The crossing still counts even when its fix is not stored.
                do {
                    try await ready().insertEvents(records, states: crossing.stateChanges)
                    geofenceEngine = fences
                    publishEvents(crossing.events)
                } catch {
                    logger.error("could not store geofence events", metadata: ["error": "\(error)"])
                }
            }
        case .admit(let location):
            if await admitAndRecord(location, force: trigger != .interval || heartbeat, events: records, states: crossing.stateChanges) {
                geofenceEngine = fences
                publishEvents(crossing.events)
            }
        }
        await runStationary(actions, previousMotion: oldMotion)
    }

    /// Stores one location (with any geofence events in the same transaction), then
    /// commits it to the gate and emits it. Returns whether it was stored.
    @discardableResult
    func record(_ location: Location, events: [GeofenceEventRecord] = [], states: [String: Bool] = [:]) async -> Bool {
        do {
            let trimmed = try await ready().insert(location, events: events, geofenceStates: states)
            stats.trimmed += trimmed
            stats.stored += 1
            stats.lastStoredFix = location.timestamp
            machine.committed(location)
            positionBroadcast.publish(location)
            await syncEngine?.fixStored()
            await pruneIfDue()
            return true
        } catch {
            stats.storeFailures += 1
            stats.lastError = error
            logger.error("could not store a fix; tracking continues", metadata: ["error": "\(error)"])
            return false
        }
    }

    private func publishEvents(_ events: [GeofenceEvent]) {
        guard !events.isEmpty else { return }
        for e in events {
            logger.info("geofence crossing", metadata: ["geofence": "\(e.geofenceId)", "type": "\(e.transition.rawValue)"])
            geofenceEventBroadcast.publish(e)
        }
        // Geofence events are sparse and high-signal: upload at once (SY-3).
        if let engine = syncEngine { Task { await engine.wake(.geofenceEvent) } }
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
        wakeSourceEndWaiters()
    }

    private func wakeSourceEndWaiters() {
        let waiters = sourceEndWaiters
        sourceEndWaiters = []
        for w in waiters { w.resume() }
    }

    // MARK: - Stationary handling (FX-6)

    /// Applies a new configuration to the stationary detector.
    func applyStationary(_ config: BeekonConfig) async {
        let actions = stationary.reconfigure(
            policy: config.whenStationary, radiusMeters: config.stationaryRadiusMeters,
            checkInIntervalSeconds: config.checkInIntervalSeconds)
        await runStationary(actions, previousMotion: stationary.motion)
    }

    /// Runs the detector's provider actions, persists motion changes and (re)arms the check-in timer.
    func runStationary(_ actions: [StationaryDetector.Action], previousMotion: Motion) async {
        for action in actions {
            switch action {
            case .pauseProvider:
                await storeHeld()
                if machine.session != nil { await deps.provider.setPowerMode(.paused) }
            case .resumeProvider:
                if machine.session != nil { await deps.provider.setPowerMode(machine.config.preset.powerMode) }
            case .becameStationary, .resumedMoving, .checkIn:
                break
            }
        }
        if stationary.providerPaused {
            if probingWhilePaused {
                // The probe's fix arrived and the device is still inside the radius: sleep again.
                probingWhilePaused = false
                if machine.session != nil { await deps.provider.setPowerMode(.paused) }
            }
            armProbe()
        } else {
            probeTask?.cancel()
            probeTask = nil
            probingWhilePaused = false
        }
        if stationary.motion != previousMotion {
            logger.info("motion changed", metadata: ["motion": "\(stationary.motion.rawValue)"])
            try? await ready().setMotion(stationary.motion)
        }
        armCheckIn()
    }

    /// A paused source may deliver nothing at all (gpsd with its watch off), so every
    /// `stationaryProbeInterval` of clock time the SDK wakes it for one fix to check
    /// whether the device has left the radius (FX-6); sources that keep delivering while
    /// paused (replay) never reach the probe.
    private func armProbe() {
        probeTask?.cancel()
        let clock = deps.clock
        let config = machine.config
        probeTask = Task { [weak self] in
            do { try await clock.sleep(for: FixPipeline.probeInterval(default: Beekon.stationaryProbeInterval, config: config)) } catch {
                return
            }
            await self?.probeDue()
        }
    }

    private func probeDue() async {
        guard machine.session != nil, stationary.providerPaused, !probingWhilePaused else { return }
        probingWhilePaused = true
        logger.debug("waking the paused source for one fix")
        await deps.provider.setPowerMode(machine.config.preset.powerMode)
    }

    /// Sleeps on the injected clock until the next check-in is due, then records it.
    private func armCheckIn() {
        let due = machine.session == nil ? nil : stationary.nextCheckInDue
        if due == armedCheckIn, checkInTask != nil || due == nil { return }  // already armed for it
        checkInTask?.cancel()
        checkInTask = nil
        armedCheckIn = due
        guard let due else { return }
        let delay = max(0, due.timeIntervalSince(deps.clock.now()))
        let clock = deps.clock
        checkInTask = Task { [weak self] in
            do { try await clock.sleep(for: .milliseconds(Int64(delay * 1000))) } catch { return }
            await self?.checkInDue()
        }
    }

    private func checkInDue() async {
        checkInTask = nil
        armedCheckIn = nil
        guard machine.session != nil else { return }
        for action in stationary.tick(now: deps.clock.now()) {
            guard case .checkIn(let cached) = action else { continue }
            // From the cached position with a fresh timestamp: the hardware is not asked.
            if case .admit(let location) = machine.decide(
                cached, id: deps.makeID(), motion: .stationary, trigger: .checkIn, bypassGate: true)
            {
                // Uploaded at once: a check-in refreshes the device's last contact on the server (BY-4).
                if await admitAndRecord(location, force: true) { await syncEngine?.wake(.checkIn) }
            }
        }
        armCheckIn()
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
        // After the state is emitted and persisted: a waiter sees the final state.
        if sourceEnded { wakeSourceEndWaiters() }
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
            checkInTask?.cancel()
            checkInTask = nil
            armedCheckIn = nil
            probeTask?.cancel()
            probeTask = nil
            probingWhilePaused = false
            // Stopping the provider ends its stream; the generation bump makes any fix still
            // in flight a no-op. The consume task is not cancelled: this action may run on it
            // (a source failure), and the writes that follow must not see a cancelled task.
            runGeneration += 1
            consumeTask = nil
            await deps.provider.stop()
            sourceEnded = true  // waiters are woken once every action ran (see performThrowing)
        case .clearIntent:
            try await ready().clearIntent()
        case .closeSession(let session, let reason):
            try await ready().endSession(session, reason: reason, at: deps.clock.now(), clearIntent: false)
        case .emitState(let state):
            logger.info("state changed", metadata: ["state": "\(state)"])
            stateBroadcast.publish(state)
        case .store(let location):
            await record(location)
            await persistHeld(always: true)
        }
    }
}
