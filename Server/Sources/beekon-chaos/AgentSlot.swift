import BeekonChaos
import BeekonPrimitives
import Foundation

/// One agent of a trial: its database, config and track, and every `beekon` process run on
/// them (killed and restarted many times). The proxy's threads kill it synchronously (with
/// a batch in flight) through `kill()`.
final class AgentSlot: Sendable {
    /// What the agent runs.
    enum Mode: String, Sendable {
        /// `beekon track` (replays the track, uploads as it goes, drains at the end).
        case track
        /// `beekon sync` (drains the queue).
        case sync
    }

    /// Its number in the trial.
    let index: Int
    /// Its path label at the proxy (`a<index>`).
    var label: String { "a\(index)" }
    /// Its SQLite database.
    let db: String
    /// Its JSON config.
    let config: String
    /// The recording it replays.
    let track: String
    /// The replay speed.
    let speed: String
    /// The tmpfs its database sits on, if any.
    let disk: String?
    private let directory: String
    private let runs = Locked<[ChildProcess]>([])

    init(index: Int, directory: String, track: String, speed: String, disk: String?) {
        self.index = index
        self.directory = directory
        self.track = track
        self.speed = speed
        self.disk = disk
        db = ((disk ?? directory) as NSString).appendingPathComponent("agent\(index).sqlite")
        config = (directory as NSString).appendingPathComponent("agent\(index).json")
    }

    /// Starts a run in `mode`.
    func launch(_ mode: Mode, options: ChaosOptions) throws -> ChildProcess {
        let drain = ["--drain-timeout", "\(options.drainTimeout)"]
        let arguments =
            mode == .track
            ? ["track", "--source", "replay:\(track)", "--speed", speed, "--db", db, "--config", config] + drain
            : ["sync", "--db", db, "--config", config] + drain
        let run = try ChildProcess(options.beekon, arguments, directory: directory, name: "agent\(index)-\(mode.rawValue)")
        runs.withLock { $0.append(run) }
        return run
    }

    /// SIGKILLs the current run; false when none is running.
    func kill() -> Bool {
        guard let run = runs.withLock({ $0.last }) else { return false }
        return run.kill()
    }

    /// Every run so far.
    var allRuns: [ChildProcess] { runs.value }

    /// Session ids from every run's `started session` / `resumed session` lines.
    var sessions: [String] { allRuns.flatMap { ChildProcess.sessions(in: $0.stdout) } }

    /// The arguments of every run (`track`, `sync`, …), for failure messages.
    var runModes: [String] { allRuns.map { $0.arguments.first ?? "?" } }

    /// Writes the config: gate off, sync through the proxy under this agent's label, the
    /// static key or seeded tokens, and geofences on the track's way (crossings are stored
    /// with their fix and uploaded, GF-3).
    func writeConfig(
        proxyPort: Int, batch: Int, trial: Int, tokens: (access: String, refresh: String)?, fences: [(Double, Double)]
    ) throws {
        var sync: [String: Any] = [
            "url": "http://127.0.0.1:\(proxyPort)/\(label)/v1/locations", "batchSize": batch, "syncThreshold": batch,
            "intervalSeconds": 60, "requestTimeoutSeconds": 10,
        ]
        if let tokens {
            sync["auth"] = [
                "accessToken": tokens.access, "refreshToken": tokens.refresh, "expiresAt": 1, "skewMarginSeconds": 1,
                "refreshUrl": "http://127.0.0.1:\(proxyPort)/\(label)/oauth/token",
                "refreshPayload": ["grant_type": "refresh_token", "refresh_token": "{refreshToken}"],
            ]
        } else {
            sync["headers"] = ["Authorization": "Bearer \(ChaosOptions.apiKey)"]
        }
        let config: [String: Any] = [
            "minTimeBetweenLocationsSeconds": 0, "minDistanceBetweenLocationsMeters": 0, "sync": sync,
            "extras": ["chaos_trial": "\(trial)", "agent": "\(index)"],
            "geofences": fences.enumerated().map { k, point in
                ["id": "t\(trial)-a\(index)-f\(k)", "latitude": point.0, "longitude": point.1, "radiusMeters": 60] as [String: Any]
            },
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: self.config))
    }
}
