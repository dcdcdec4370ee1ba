import BeekonTestSupport
import Foundation
import Testing

/// Paths, temporary directories and output parsing shared by the agent tests.
enum Fixtures {
    /// …/Tests/BeekonAgentTests/Fixtures.swift → the package root.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The DocC article that lists every configuration key (`BeekonConfig` and the agent's JSON).
    static let configurationArticle = packageRoot.appendingPathComponent("Sources/Beekon/Beekon.docc/Configuration.md")

    /// The real recordings kept in the repository: `Tests/Data` (see its NOTICE.md).
    static let dataRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("../Data")
        .standardizedFileURL

    static func data(_ relative: String) -> String { dataRoot.appendingPathComponent(relative).path }

    static let walkGPX = data("gpx/togeojson_apple_watch_walk_1hz.gpx")
    static let busGPX = data("gpx/movingpandas_304_to_UL_bus_1hz.gpx")
    static let visnjanGPX = data("gpx/gpxgo_visnjan_4s.gpx")
    static let walkNMEA = data("nmea/derived_apple_watch_walk.nmea")

    /// First point of the walk GPX (`<trkpt lon="-81.097216" lat="32.064999">`, ele 14.601502).
    static let walkFirst = (lat: 32.064999, lon: -81.097216, ele: 14.601502)
}

extension TempDir {
    /// A config file with every fix admitted (the gate disabled).
    func gateOffConfig() throws -> String {
        try write("gate-off.json", #"{"minTimeBetweenLocationsSeconds":0,"minDistanceBetweenLocationsMeters":0}"#)
    }
}

/// `beekon status --json`, parsed.
struct AgentStatus {
    var raw: [String: Any]
    var trackingIntent: Bool { raw["tracking_intent"] as? Bool ?? false }
    var sessionID: String? { raw["session_id"] as? String }
    var locations: Int { jsonNumber(raw["locations"]).map { Int($0) } ?? -1 }
    var state: String { raw["state"] as? String ?? "" }

    static func read(db: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> AgentStatus {
        let out = try await AgentProcess.run(["status", "--db", db, "--json"], timeout: .seconds(30))
        try #require(out.status == 0 && !out.signalled, "status failed: \(out.stderr)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(out.stdoutText.utf8))
        let dict = try #require(
            object as? [String: Any], "status --json is not an object: \(out.stdoutText)",
            sourceLocation: sourceLocation)
        return AgentStatus(raw: dict)
    }
}

/// One NDJSON history row.
struct HistoryRow {
    var raw: [String: Any]
    var id: String { raw["id"] as? String ?? "" }
    var sessionID: String { raw["session_id"] as? String ?? "" }
    var timestamp: String { raw["timestamp"] as? String ?? "" }
    var latitude: Double { jsonNumber(raw["latitude"]) ?? .nan }
    var longitude: Double { jsonNumber(raw["longitude"]) ?? .nan }
    var altitude: Double? { jsonNumber(raw["altitude"]) }

    /// `beekon history --db D --format ndjson [extra]`, every line parsed as a JSON object.
    static func read(db: String, _ extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) async throws -> [HistoryRow] {
        let out = try await AgentProcess.run(["history", "--db", db, "--format", "ndjson"] + extra, timeout: .seconds(60))
        try #require(out.status == 0 && !out.signalled, "history failed: \(out.stderr)", sourceLocation: sourceLocation)
        return try out.stdout.filter { !$0.isEmpty }.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            let dict = try #require(
                object as? [String: Any], "NDJSON line is not an object: \(line)",
                sourceLocation: sourceLocation)
            return HistoryRow(raw: dict)
        }
    }
}

/// Parses `progress … stored=N …` lines.
enum Progress {
    static func value(_ key: String, in line: String) -> Int? {
        guard line.hasPrefix("progress ") else { return nil }
        for part in line.split(separator: " ") where part.hasPrefix(key + "=") {
            return Int(part.dropFirst(key.count + 1))
        }
        return nil
    }
}

extension String {
    /// The session id of a `started session <uuid>` / `resumed session <uuid>` line.
    var sessionIDFromStartLine: String? {
        for prefix in ["started session ", "resumed session "] where hasPrefix(prefix) {
            return String(dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}

/// A JSON number from `JSONSerialization` as a Double (Int, Double or NSNumber; not Bool).
func jsonNumber(_ value: Any?) -> Double? {
    switch value {
    case let v as Int: return Double(v)
    case let v as Double: return v
    case let v as NSNumber: return v.doubleValue
    default: return nil
    }
}
