import Foundation

/// Stationary handling (FX-6) in the actor: the detector's provider actions, the probe
/// that wakes a paused source, and the check-in timer, as decided by `StationaryTiming`.
extension Beekon {
    /// Applies a new configuration to the stationary detector.
    func applyStationary(_ config: BeekonConfig) async {
        await apply(core.reconfigureStationary(config))
        await tuneSource()
    }

    /// Tells a tuning-aware source (the CoreLocation provider) what the effective configuration
    /// and the stationary detector ask of the OS (``SourceTuning``): the gate's distance as the
    /// OS distance filter, and the stationary position while the source is paused for it. Called
    /// before every start and power-mode change and after every configuration or profile change.
    func tuneSource() async {
        guard let observer = deps.provider as? any SourceTuningObserver else { return }
        let detector = core.stationary.detector
        let position = detector.providerPaused ? detector.anchor : nil
        let tuning = SourceTuning(
            config: core.machine.config, checkingDwell: source.checkingDwell,
            stationary: position.map {
                SourceTuning.Stationary(latitude: $0.latitude, longitude: $0.longitude, radiusMeters: detector.radiusMeters)
            })
        guard tuning != source.tuning else { return }
        source.tuning = tuning
        await observer.tuningChanged(tuning)
    }

    /// Starts or cancels the probe or the check-in timer (the interpreter's timer effects).
    func runTimer(_ effect: FixEffect) {
        let clock = deps.clock
        switch effect {
        case .armProbe:
            source.probeTimer?.cancel()
            // The heartbeat, when shorter, wakes the paused source more often (BY-4).
            let interval = FixPipeline.probeInterval(default: StationaryTiming.probeInterval, config: core.machine.config)
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
        default:
            break
        }
    }

    /// After each fix of a running source whose distance filter is on: if no fix comes through
    /// the filter for the stationary dwell (the device moved less than the filter), the filter is
    /// lifted until the next fix, so the detector can find the device still and pause the source
    /// (without it a still phone would keep the continuous service running, unheard, all day).
    /// The next fix puts the filter back and re-arms the check. At most one extra fix per dwell.
    func rearmDwellCheck() async {
        source.dwellTimer?.cancel()
        source.dwellTimer = nil
        if source.checkingDwell {
            source.checkingDwell = false
            await tuneSource()
        }
        guard core.machine.session != nil, !core.stationary.detector.providerPaused, source.tuning?.distanceFilterMeters != nil else {
            return
        }
        let clock = deps.clock
        let dwell = Duration.milliseconds(Int64(core.stationary.detector.dwellSeconds * 1000))
        source.dwellTimer = Task { [weak self] in
            do { try await clock.sleep(for: dwell) } catch { return }
            await self?.dwellCheckDue()
        }
    }

    private func dwellCheckDue() async {
        source.dwellTimer = nil
        guard core.machine.session != nil, !core.stationary.detector.providerPaused else { return }
        logger.debug("no fix through the distance filter for the dwell: lifting it for one fix")
        source.checkingDwell = true
        await tuneSource()
    }

    private func probeDue() async {
        let effects = core.probeTimerFired()
        guard !effects.isEmpty else { return }
        logger.debug("waking the paused source for one fix")
        await apply(effects)
    }

    /// Records the check-in that fell due, from the cached position with a fresh timestamp
    /// (the hardware is not asked), and arms the timer for the next.
    private func checkInDue() async {
        source.checkInTimer = nil
        await apply(core.checkInTimerFired(now: deps.clock.now(), makeID: deps.makeID))
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
        let effects = core.dueCheckIns(now: deps.clock.now(), makeID: deps.makeID)
        return await apply(effects).stored.contains { effects.storedLocation($0)?.trigger == .checkIn }
    }
}
