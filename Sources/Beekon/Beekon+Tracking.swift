import Foundation

/// The fix pipeline: a raw fix enters at `receive`, is decided by the `FixCore` (sanitised
/// once, evaluated by the geofences and the stationary detector, gated, through the
/// admission window), and its effects run once by `apply` (stored durably before anything
/// is emitted, then emitted and handed to sync).
extension Beekon {
    /// Enters tracking with `session`, running the machine's actions until one fails. On
    /// failure the state is restored (storage) or becomes `stopped(reason)` (source), and it throws.
    func begin(session: UUID, resumeFrom: GatePoint?) async throws(BeekonError) {
        let actions = core.start(session: session, resumeFrom: resumeFrom)
        try await performThrowing(actions, stoppingAtFirstError: true)
    }

    /// One raw fix from the source (ST-1, FX-7): counted, then decided whole by the core
    /// (`FixCore.fix(_:makeID:)`: sanitise, activity, heartbeat, geofences, stationary
    /// detector, gate, admission window, timers) and its effects run once, by `apply`.
    func receive(_ raw: RawFix, generation: Int) async {
        guard generation == source.generation, core.machine.session != nil else { return }
        stats.received += 1
        await apply(core.fix(raw, makeID: deps.makeID))
    }

    /// Whether uploads are configured: the store then exempts unacknowledged rows from the
    /// age prune and counts rows the cap trims before upload as lost uploads (ST-3).
    var syncOn: Bool { core.machine.config.sync != nil }

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
