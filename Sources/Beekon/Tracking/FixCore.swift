import Foundation

/// The per-fix decision as one value type: sanitise, activity and heartbeat, geofence
/// crossings, the stationary detector and its timers, the gate and the admission window.
/// Each event (a fix from the source, a stationary reconfiguration, the check-in timer) is
/// one `mutating` call returning the complete list of `FixEffect`s, in order, for the one
/// interpreter (`Beekon.apply(_:)`) to run once. No I/O and no clock reads: time comes in
/// with the fix or as `now`, ids from `makeID`.
struct FixCore: Sendable {
    /// The tracking lifecycle, gate and admission window (LC-1..8, BY-9).
    var machine = TrackingMachine(config: BeekonConfig())
    /// The stationary detector and its probe and check-in timing (FX-6).
    var stationary = StationaryTiming()
    /// App state, profiles, activity and heartbeat (BY-4).
    var pipeline: FixPipeline
    /// The geofences and their stored inside/outside states (GF-1..4).
    var geofences = GeofenceEngine()

    init(classifier: any ActivityClassifier) {
        pipeline = FixPipeline(classifier: classifier)
    }

    /// The saved configuration, restored when the database opens (nothing runs yet, so the
    /// machine's and the detector's actions are dropped).
    mutating func restore(_ config: BeekonConfig) {
        _ = machine.configure(config)
        _ = stationary.detector.reconfigure(
            policy: config.whenStationary, radiusMeters: config.stationaryRadiusMeters,
            checkInIntervalSeconds: config.checkInIntervalSeconds)
    }

    /// `start()` or a resume: the machine's actions; a run that starts forgets the detector's
    /// anchor, cache and motion.
    mutating func start(session: UUID, resumeFrom: GatePoint?) -> [TrackingMachine.Action] {
        let actions = machine.start(session: session, resumeFrom: resumeFrom)
        if !actions.isEmpty { stationary.detector.reset() }
        return actions
    }

    /// One raw fix from the running source (ST-1, FX-7): sanitised; its activity filled and
    /// the heartbeat checked (BY-4); geofences and the stationary detector evaluated before
    /// the gate; a crossing (trigger `geofence`), a return to motion (trigger `motion`) or the
    /// heartbeat bypasses the gate; then the detector's provider actions, the probe, the
    /// motion change and the check-in timer; last the distance-filter dwell check.
    /// Not tracking: nothing.
    mutating func fix(_ raw: RawFix, makeID: () -> UUID) -> [FixEffect] {
        guard let session = machine.session else { return [] }
        guard let sanitised = FixSanitiser.sanitise(raw) else { return [.invalid] }
        let config = machine.config
        let fix = pipeline.classify(sanitised, config: config)
        let heartbeat = FixPipeline.heartbeatDue(fix.fix, lastAdmitted: machine.gate.last?.timestamp, config: config)
        var effects: [FixEffect] = heartbeat ? [.heartbeat(intervalSeconds: config.heartbeatSeconds ?? 0)] : []
        // Evaluated on a copy: the states change only once the crossing is stored (`crossingStored`).
        var fences = geofences
        let crossing = fences.evaluateCrossings(
            latitude: fix.latitude, longitude: fix.longitude, accuracy: fix.accuracy,
            timestamp: fix.timestamp, makeID: makeID)
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
                    timestamp: $0.timestamp, sessionId: session)
            },
            states: crossing.stateChanges, events: crossing.events)
        effects += machine.decide(
            .tracked(
                fix, id: makeID(), motion: stationary.detector.motion, trigger: trigger,
                bypassGate: trigger != .interval || heartbeat, crossing: crossingValue))
        effects += settle(actions, previousMotion: oldMotion)
        effects.append(.rearmDwellCheck)
        return effects
    }

    /// The fresh fix answering a locate request (BY-2), stored whatever the gate says (see
    /// `FixEvent.locateAnswer`) with the current motion: the effects and the answer's id, or
    /// nil when the fix is not valid (no id is taken then).
    mutating func locateAnswer(_ raw: RawFix, requestID: UUID, makeID: () -> UUID) -> (effects: [FixEffect], id: UUID)? {
        guard let fix = FixSanitiser.sanitise(raw) else { return nil }
        let id = makeID()
        let event = FixEvent.locateAnswer(
            fix, id: id, requestID: requestID, motion: stationary.detector.motion, idleSession: makeID())
        return (machine.decide(event), id)
    }

    /// A crossing was stored (with its fix or alone): the fences' states follow it.
    mutating func crossingStored(_ crossing: FixCrossing) {
        geofences.adopt(crossing.states)
    }

    /// A new configuration for the stationary detector: its provider actions, probe and
    /// check-in timer. A motion change the new policy causes is not reported as `setMotion`
    /// (the motion is compared after the detector was reconfigured, as before this type).
    mutating func reconfigureStationary(_ config: BeekonConfig) -> [FixEffect] {
        let actions = stationary.detector.reconfigure(
            policy: config.whenStationary, radiusMeters: config.stationaryRadiusMeters,
            checkInIntervalSeconds: config.checkInIntervalSeconds)
        return settle(actions, previousMotion: stationary.detector.motion)
    }

    /// The check-in timer fired at `now`: the check-in due then (if any), and the timer for the next.
    mutating func checkInTimerFired(now: Date, makeID: () -> UUID) -> [FixEffect] {
        stationary.checkInFired()
        var effects = dueCheckIns(now: now, makeID: makeID)
        effects += TrackingMachine.effects(of: stationary.rearmCheckIn(tracking: machine.session != nil))
        return effects
    }

    /// The check-in due at `now` while tracking (under `pauseWithCheckIns`, while stationary),
    /// recorded from the cached position stamped `now`: the hardware is not asked.
    mutating func dueCheckIns(now: Date, makeID: () -> UUID) -> [FixEffect] {
        guard machine.session != nil else { return [] }
        var effects: [FixEffect] = []
        for action in stationary.detector.tick(now: now) {
            guard case .checkIn(let cached) = action, let fix = FixSanitiser.sanitise(cached) else { continue }
            effects += machine.decide(.checkIn(fix, id: makeID()))
        }
        return effects
    }

    /// The probe timer fired (FX-6): while the source is paused for stationary, wake it for
    /// one fix in the preset's power mode (nothing when not tracking, not paused, or a probe
    /// is already out).
    mutating func probeTimerFired() -> [FixEffect] {
        guard stationary.probeDue(tracking: machine.session != nil) else { return [] }
        return [.setPowerMode(machine.config.preset.powerMode)]
    }

    /// The source stopped: the probe and check-in timers go.
    mutating func sourceStopped() -> [FixEffect] {
        TrackingMachine.effects(of: stationary.sourceStopped())
    }

    /// After the detector ran: its provider actions, the probe, a motion change, the check-in timer.
    private mutating func settle(_ actions: [StationaryDetector.Action], previousMotion: Motion) -> [FixEffect] {
        var effects = machine.decide(actions)
        effects += TrackingMachine.effects(of: stationary.settleProbe(tracking: machine.session != nil))
        let motion = stationary.detector.motion
        if motion != previousMotion { effects.append(.setMotion(motion)) }
        effects += TrackingMachine.effects(of: stationary.rearmCheckIn(tracking: machine.session != nil))
        return effects
    }
}
