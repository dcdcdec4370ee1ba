import Foundation

/// A chaos run's settings, as `beekon-chaos` parsed them (the same for every trial).
struct ChaosOptions: Sendable {
    /// How the agents authenticate.
    enum Auth: String, Sendable, CaseIterable {
        /// A static API key.
        case key
        /// Rotating access and refresh tokens (refresh faults on).
        case tokens
        /// A per-trial pick of the two.
        case mixed
    }

    /// Where the server keeps its data.
    enum Store: String, Sendable, CaseIterable {
        /// A SQLite file per trial.
        case sqlite
        /// A database per trial in one shared PostgreSQL cluster (restarted at random).
        case postgres
    }

    /// The API key of every server and viewer.
    static let apiKey = "chaos-api-key-0123456789"

    var trials: Int
    var seed: Int
    var store: Store
    var agents: Int
    /// Seconds of chaos per trial.
    var duration: Double
    /// The agents' `--drain-timeout`, seconds.
    var drainTimeout: Int
    /// Trials run side by side.
    var jobs: Int
    /// Replay speeds to pick from (`max`, `60`, …).
    var speeds: [String]
    var auth: Auth
    /// Whether one agent's database may sit on a small tmpfs that fills up (needs root).
    var diskFull: Bool
    /// Live viewers per trial.
    var viewers: Int
    /// Keep the work directory even when every trial passed.
    var keep: Bool
    /// The root package's agent.
    var beekon: URL
    /// The server.
    var ingest: URL
    /// The recordings the agents replay (the repository's Tests/Data).
    var data: URL

    /// The recordings the agents replay, relative to `data`.
    static let tracks = [
        "gpx/togeojson_apple_watch_walk_1hz.gpx",
        "gpx/movingpandas_304_to_UL_bus_1hz.gpx",
        "gpx/gpxgo_visnjan_4s.gpx",
        "nmea/derived_apple_watch_walk.nmea",
        "nmea/derived_304_to_UL_bus.nmea",
    ]

    /// A generator seed for stream `stream` of trial `trial` (`stream` names the consumer).
    func streamSeed(trial: Int, _ stream: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in "\(self.seed)/\(trial)/\(stream)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}
