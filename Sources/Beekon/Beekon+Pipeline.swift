import Foundation
import GRDB
import Logging

/// The fix pipeline's public calls (BY-4, BY-6): app state and the diagnostic log.
extension Beekon {
    /// Switches between the foreground and background location profiles (BY-4). Takes effect
    /// from the next fix without restarting the source (LC-8); recorded in the diagnostic log.
    public func setAppState(_ state: AppState) async throws(BeekonError) {
        _ = try await ready()
        defer { rearmHeartbeat() }  // the foreground heartbeat runs in the foreground only
        let previous = core.pipeline.appState
        guard let effective = core.pipeline.setAppState(state) else {
            if previous != state { logger.info("app state changed", metadata: ["app_state": "\(state.rawValue)", "profile": "unchanged"]) }
            return
        }
        logger.info(
            "profile switched",
            metadata: [
                "app_state": "\(state.rawValue)", "preset": "\(effective.preset.rawValue)",
                "min_time_s": "\(effective.effectiveMinTimeSeconds)", "min_distance_m": "\(effective.effectiveMinDistanceMeters)",
                "heartbeat_s": "\(effective.heartbeatSeconds.map { "\($0)" } ?? "off")",
            ])
        await perform(core.machine.configure(effective))
        await applyStationary(effective)
    }

    /// (Re)arms the foreground heartbeat (BY-4): in the foreground, with `heartbeatSeconds`
    /// set, a timer on the SDK's clock asks the source for one fresh fix when none was stored
    /// in that time (iOS suspends stationary updates even in the foreground, so waiting for a
    /// fix the source happens to deliver is not enough). The fix goes through the pipeline,
    /// where the heartbeat admits it past the gate. Every stored fix restarts the countdown:
    /// it moves the deadline, and the running timer, when it wakes before that, sleeps on to
    /// it. A new timer task is started only when there is none for this run and interval (a
    /// task per stored fix cost ~19 µs of CPU per fix).
    func rearmHeartbeat() {
        let config = core.machine.config
        guard core.machine.session != nil, core.pipeline.appState == .foreground, let seconds = config.heartbeatSeconds else {
            stopHeartbeat()
            return
        }
        let clock = deps.clock
        source.heartbeatDeadline = clock.now().addingTimeInterval(seconds)
        let generation = source.generation
        if source.heartbeatTimer != nil, let armed = source.heartbeatArmed, armed.generation == generation, armed.seconds == seconds {
            return
        }
        source.heartbeatTimer?.cancel()
        source.heartbeatArmed = (generation, seconds)
        source.heartbeatTimer = Task { [weak self] in
            var wait = seconds
            while true {
                do { try await clock.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up)))) } catch { return }
                guard let self, let left = await self.heartbeatWoke(generation: generation) else { return }
                wait = left
            }
        }
    }

    /// Cancels the foreground heartbeat's timer.
    func stopHeartbeat() {
        source.heartbeatTimer?.cancel()
        source.heartbeatTimer = nil
        source.heartbeatArmed = nil
        source.heartbeatDeadline = nil
    }

    /// The heartbeat's timer woke: asks for a fix when the deadline has passed (nil: the timer
    /// ends), else returns the seconds still to sleep (a fix stored since moved the deadline).
    private func heartbeatWoke(generation: Int) async -> Double? {
        guard !Task.isCancelled, generation == source.generation, let deadline = source.heartbeatDeadline else { return nil }
        let left = deadline.timeIntervalSince(deps.clock.now())
        if left >= 0.001 { return left }  // sleeps are whole milliseconds, rounded up: no busy loop
        await heartbeatFired(generation: generation)
        return nil
    }

    private func heartbeatFired(generation: Int) async {
        guard generation == source.generation, core.machine.session != nil else { return }
        // This task: a re-arm below must start a new timer and not cancel the writes it runs.
        source.heartbeatTimer = nil
        source.heartbeatArmed = nil
        let config = core.machine.config
        let timeout = Duration.milliseconds(Int64(min(30, config.heartbeatSeconds ?? 30) * 1000))
        logger.debug("heartbeat: asking for a fresh fix")
        let stored = stats.stored
        let raw = try? await deps.provider.currentLocation(timeout: timeout, mode: config.preset.powerMode)
        if let raw, generation == source.generation { await receive(raw, generation: generation) }
        // A stored fix re-armed the timer already; otherwise try again after another interval.
        if stats.stored == stored, generation == source.generation { rearmHeartbeat() }
    }

    /// The SDK's logger: the injected one, teed into the diagnostic log (for a host's own
    /// source events, e.g. the agent's gpsd reconnects).
    public nonisolated var diagnosticLogger: Logger { logger }

    /// The current app state (foreground unless set).
    public var appState: AppState { core.pipeline.appState }

    /// The diagnostic log (BY-6), oldest first, for an app's "send logs to support" button.
    /// Coordinates are redacted unless `includeCoordinates`; secrets are never logged.
    public func diagnosticLog(since: Date? = nil, includeCoordinates: Bool = false) async throws(BeekonError) -> [DiagnosticEntry] {
        let store = try await ready()
        await diagnostics.flush()
        do {
            return try DiagnosticLog.read(store.pool, since: since).map { $0.redacted(includeCoordinates: includeCoordinates) }
        } catch {
            throw .storage("could not read the diagnostic log: \(error)")
        }
    }

    /// Reads the diagnostic log of a database another process may be writing (read-only), for `beekon logs`.
    public static func diagnosticLog(
        databaseAt path: String, since: Date? = nil, includeCoordinates: Bool = false
    ) async throws(BeekonError) -> [DiagnosticEntry] {
        guard FileManager.default.fileExists(atPath: path) else { throw .storage("no database at \(path)") }
        let store = try LocationStore(path: path, logger: Logger(label: "beekon.logs"), readOnly: true)
        do {
            return try DiagnosticLog.read(store.pool, since: since).map { $0.redacted(includeCoordinates: includeCoordinates) }
        } catch {
            throw .storage("could not read the diagnostic log: \(error)")
        }
    }

    /// Writes buffered diagnostic entries now (the agent calls it before exiting).
    public func flushDiagnostics() async {
        await diagnostics.flush()
    }

    /// Applies a configuration's diagnostic settings and remembers it as the profile base;
    /// returns the configuration in effect (the current profile applied).
    func adoptBase(_ config: BeekonConfig) -> BeekonConfig {
        core.pipeline.base = config
        diagnostics.configure(level: config.diagnosticLogLevel, capacity: config.diagnosticLogCapacity)
        return core.pipeline.effective
    }

    /// The gate's decisions of this process in aggregate (BY-6), logged when a session stops.
    func logGateSummary() {
        logger.info(
            "gate summary",
            metadata: [
                "received": "\(stats.received)", "stored": "\(stats.stored)", "too_soon": "\(stats.tooSoon)",
                "too_close": "\(stats.tooClose)", "not_later": "\(stats.notLater)", "invalid": "\(stats.invalid)",
                "store_failures": "\(stats.storeFailures)", "app_state": "\(core.pipeline.appState.rawValue)",
            ])
    }

}
