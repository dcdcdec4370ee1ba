import Foundation
import GRDB
import Logging

/// The fix pipeline's public calls (BY-4, BY-6): app state and the diagnostic log.
extension Beekon {
    /// Switches between the foreground and background location profiles (BY-4). Takes effect
    /// from the next fix without restarting the source (LC-8); recorded in the diagnostic log.
    public func setAppState(_ state: AppState) async throws(BeekonError) {
        _ = try await ready()
        let previous = pipeline.appState
        guard let effective = pipeline.setAppState(state) else {
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
        await perform(machine.configure(effective))
        await applyStationary(effective)
    }

    /// The SDK's logger: the injected one, teed into the diagnostic log (for a host's own
    /// source events, e.g. the agent's gpsd reconnects).
    public nonisolated var diagnosticLogger: Logger { logger }

    /// The current app state (foreground unless set).
    public var appState: AppState { pipeline.appState }

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
        pipeline.base = config
        diagnostics.configure(level: config.diagnosticLogLevel, capacity: config.diagnosticLogCapacity)
        return pipeline.effective
    }

    /// The gate's decisions of this process in aggregate (BY-6), logged when a session stops.
    func logGateSummary() {
        logger.info(
            "gate summary",
            metadata: [
                "received": "\(stats.received)", "stored": "\(stats.stored)", "too_soon": "\(stats.tooSoon)",
                "too_close": "\(stats.tooClose)", "not_later": "\(stats.notLater)", "invalid": "\(stats.invalid)",
                "store_failures": "\(stats.storeFailures)", "app_state": "\(pipeline.appState.rawValue)",
            ])
    }

    /// The fix with its activity (BY-4) and whether the heartbeat makes it due past the gate.
    func pipelineStep(_ fix: SanitisedFix) -> (SanitisedFix, heartbeat: Bool) {
        let config = machine.config
        let raw = pipeline.classify(fix.fix, config: config)
        let classified = raw == fix.fix ? fix : FixSanitiser.sanitise(raw) ?? fix
        let heartbeat = FixPipeline.heartbeatDue(raw, lastAdmitted: machine.gate.last?.timestamp, config: config)
        if heartbeat { logger.debug("heartbeat fix", metadata: ["interval_s": "\(config.heartbeatSeconds ?? 0)"]) }
        return (classified, heartbeat)
    }
}
