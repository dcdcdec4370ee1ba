import Foundation

/// The fix pipeline: a raw fix enters at `receive`, is sanitised once, evaluated by the
/// geofences and the stationary detector, decided by the `TrackingMachine` (gate and
/// admission window), and its effects run by `apply` (stored durably before anything is
/// emitted, then emitted and handed to sync).
extension Beekon {
    /// Enters tracking with `session`, running the machine's actions until one fails. On
    /// failure the state is restored (storage) or becomes `stopped(reason)` (source), and it throws.
    func begin(session: UUID, resumeFrom: GatePoint?) async throws(BeekonError) {
        let actions = machine.start(session: session, resumeFrom: resumeFrom)
        if !actions.isEmpty { stationary.detector.reset() }
        try await performThrowing(actions, stoppingAtFirstError: true)
    }

    /// One raw fix from the source (ST-1, FX-7): sanitise; evaluate geofences and the
    /// stationary detector on every fix (before the gate); a crossing (trigger `geofence`)
    /// or a return to motion (trigger `motion`) bypasses the gate; the decider's effects
    /// store it durably, then emit.
    func receive(_ raw: RawFix, generation: Int) async {
        guard generation == source.generation, machine.session != nil else { return }
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
        let oldMotion = stationary.detector.motion
        let actions = stationary.detector.observe(fix: fix.fix)
        var trigger = Trigger.interval
        if !crossing.events.isEmpty {
            trigger = .geofence
        } else if actions.contains(where: { if case .resumeProvider = $0 { true } else { false } }) {
            // Leaving the radius after a pause resumes tracking with a `motion` fix (FX-6);
            // under keepTracking nothing was paused and the gate decides as usual.
            trigger = .motion
        }
        let crossingValue = FixCrossing(
            records: crossing.events.map {
                GeofenceEventRecord(
                    id: $0.id, geofenceId: $0.geofenceId, transition: $0.transition,
                    timestamp: $0.timestamp, sessionId: machine.session)
            },
            states: crossing.stateChanges, events: crossing.events)
        let bypass = trigger != .interval || heartbeat
        let effects = machine.decide(
            .tracked(
                fix, id: deps.makeID(), motion: stationary.detector.motion, trigger: trigger, bypassGate: bypass,
                crossing: crossingValue))
        if await apply(effects).crossingStored { geofenceEngine = fences }
        await runStationary(actions, previousMotion: oldMotion)
        await rearmDwellCheck()
    }

    /// Whether uploads are configured: the store then exempts unacknowledged rows from the
    /// age prune and counts rows the cap trims before upload as lost uploads (ST-3).
    var syncOn: Bool { machine.config.sync != nil }

    /// Age prune with the first stored fix of a run, then at most hourly (clock time).
    /// Not at start: a replay's clock reads real time until its first fix, and pruning
    /// then would judge recorded rows by today's date (SRC-4).
    func pruneIfDue() async {
        let now = deps.clock.now()
        if let lastPrune, now.timeIntervalSince(lastPrune) < 3600, now >= lastPrune { return }
        lastPrune = now
        do {
            _ = try await ready().pruneByAge(now: now, maxAge: LocationStore.localOnlyMaxAge, syncOn: syncOn)
        } catch {
            logger.error("age prune failed", metadata: ["error": "\(error)"])
        }
    }
}
