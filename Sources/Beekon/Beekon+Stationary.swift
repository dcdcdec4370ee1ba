import Foundation

/// Stationary handling (FX-6) in the actor: the detector's provider actions, the probe
/// that wakes a paused source, and the check-in timer, as decided by `StationaryTiming`.
extension Beekon {
    /// Applies a new configuration to the stationary detector.
    func applyStationary(_ config: BeekonConfig) async {
        let actions = stationary.detector.reconfigure(
            policy: config.whenStationary, radiusMeters: config.stationaryRadiusMeters,
            checkInIntervalSeconds: config.checkInIntervalSeconds)
        await runStationary(actions, previousMotion: stationary.detector.motion)
    }

    /// Runs the detector's provider actions, persists motion changes and (re)arms the timers.
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
        let probe = stationary.settleProbe(tracking: machine.session != nil)
        if probe.contains(.pauseSource) { await deps.provider.setPowerMode(.paused) }
        runTimers(probe)
        let motion = stationary.detector.motion
        if motion != previousMotion {
            logger.info("motion changed", metadata: ["motion": "\(motion.rawValue)"])
            try? await ready().setMotion(motion)
        }
        runTimers(stationary.rearmCheckIn(tracking: machine.session != nil))
    }

    /// Starts and cancels the probe and check-in timers (`pauseSource` is the caller's).
    func runTimers(_ actions: [StationaryTiming.Action]) {
        let clock = deps.clock
        for action in actions {
            switch action {
            case .pauseSource:
                break
            case .armProbe:
                source.probeTimer?.cancel()
                // The heartbeat, when shorter, wakes the paused source more often (BY-4).
                let interval = FixPipeline.probeInterval(default: StationaryTiming.probeInterval, config: machine.config)
                source.probeTimer = Task { [weak self] in
                    do { try await clock.sleep(for: interval) } catch { return }
                    await self?.probeDue()
                }
            case .cancelProbe:
                source.probeTimer?.cancel()
                source.probeTimer = nil
            case .armCheckIn(let due):
                source.checkInTimer?.cancel()
                let delay = max(0, due.timeIntervalSince(clock.now()))
                source.checkInTimer = Task { [weak self] in
                    do { try await clock.sleep(for: .milliseconds(Int64(delay * 1000))) } catch { return }
                    await self?.checkInDue()
                }
            case .cancelCheckIn:
                source.checkInTimer?.cancel()
                source.checkInTimer = nil
            }
        }
    }

    private func probeDue() async {
        guard stationary.probeDue(tracking: machine.session != nil) else { return }
        logger.debug("waking the paused source for one fix")
        await deps.provider.setPowerMode(machine.config.preset.powerMode)
    }

    /// Records the check-in that fell due, from the cached position with a fresh timestamp:
    /// the hardware is not asked.
    private func checkInDue() async {
        source.checkInTimer = nil
        stationary.checkInFired()
        await recordDueCheckIns()
        runTimers(stationary.rearmCheckIn(tracking: machine.session != nil))
    }

    /// The background refresh task's work (BY-4, iOS `BGAppRefresh`): a suspended app's
    /// check-in timer never fires, so the refresh records the check-in that fell due (from the
    /// cached position, as the timer would) and then uploads. Returns whether one was recorded.
    @discardableResult
    package func performBackgroundRefresh() async -> Bool {
        let recorded = await recordDueCheckIns()
        if syncOn { _ = try? await sync() }
        return recorded
    }

    /// Records the check-in due now, if any (under `pauseWithCheckIns`, while stationary).
    @discardableResult
    private func recordDueCheckIns() async -> Bool {
        guard machine.session != nil else { return false }
        var recorded = false
        for action in stationary.detector.tick(now: deps.clock.now()) {
            guard case .checkIn(let cached) = action, let fix = FixSanitiser.sanitise(cached) else { continue }
            let id = deps.makeID()
            if await apply(machine.decide(.checkIn(fix, id: id))).stored.contains(id) { recorded = true }
        }
        return recorded
    }
}
