import ArgumentParser
import Beekon
import BeekonSources
import Foundation

/// `beekon fidelity`: how faithful a track is when stored through the gate — the
/// measure of what a location SDK is for: a faithful track from few fixes.
struct FidelityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fidelity",
        abstract: "Replay a track through each preset (and your config) and report stored fixes and track error.",
        discussion: """
            For each configuration: fixes stored as a percentage of raw fixes, and the maximum and \
            95th-percentile distance (metres) from every raw fix to the polyline of the stored fixes. \
            Each preset is measured as specified (SPEC gate) and with turn-aware admission \
            (--turn-degrees, default 30).
            """)

    @Option(name: .long, help: "Track to replay: replay:PATH (GPX, NMEA, CSV, NDJSON).")
    var source: String

    @Option(name: .long, help: "Also measure this JSON config file.")
    var config: String?

    @Option(name: .long, help: "Heading change (degrees) for the turn-aware rows.")
    var turnDegrees: Double = 30

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    @OptionGroup var log: LogOptions

    func run() async throws {
        _ = log.bootstrap()
        let agentConfig = try loadConfig(config)
        guard case .replay(let path)? = try? SourceSpec(argument: source) else {
            Terminal.error("--source must be replay:PATH")
            throw ExitCode(2)
        }
        let track: TrackReadResult
        do { track = try TrackFile.read(contentsOf: URL(fileURLWithPath: path)) } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        var variants: [(String, BeekonConfig)] = []
        for preset in Preset.allCases {
            variants.append((preset.rawValue, BeekonConfig(preset: preset, whenStationary: .keepTracking)))
            variants.append(("\(preset.rawValue)+turn\(Int(turnDegrees))",
                             BeekonConfig(preset: preset, whenStationary: .keepTracking, turnThresholdDegrees: turnDegrees)))
        }
        if let agentConfig {
            var c = agentConfig.sdk
            c.sync = nil
            variants.append(("config", c))
        }
        var rows: [FidelityReport] = []
        for (name, config) in variants {
            rows.append(try await FidelityReport.measure(name: name, fixes: track.fixes, config: config))
        }
        if json {
            let items = rows.map {
                "{\"config\":\"\($0.name)\",\"raw\":\($0.raw),\"stored\":\($0.stored),\"stored_percent\":\(fmt($0.storedPercent))," +
                    "\"max_error_m\":\(fmt($0.maxError)),\"p95_error_m\":\(fmt($0.p95Error))}"
            }
            Terminal.out("[" + items.joined(separator: ",") + "]")
        } else {
            Terminal.out("track: \(path) (\(track.fixes.count) raw fixes)")
            Terminal.out("config".padding(toLength: 22, withPad: " ", startingAt: 0) + "  stored   % raw   max m   p95 m")
            for r in rows {
                Terminal.out(r.name.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + String(format: "  %6d  %6.1f  %6.1f  %6.1f", r.stored, r.storedPercent, r.maxError, r.p95Error))
            }
        }
    }

    private func fmt(_ v: Double) -> String { String(format: "%.2f", v) }
}

/// One configuration's fidelity on one track.
struct FidelityReport: Sendable {
    var name: String
    var raw: Int
    var stored: Int
    var maxError: Double
    var p95Error: Double
    var storedPercent: Double { raw == 0 ? 0 : Double(stored) * 100 / Double(raw) }

    /// Replays `fixes` at max speed through a real SDK instance on a temporary database.
    static func measure(name: String, fixes: [RawFix], config: BeekonConfig) async throws -> FidelityReport {
        let dir = NSTemporaryDirectory() + "beekon-fidelity-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = ReplayClock()
        let provider = ReplayProvider(fixes: fixes, speed: .asFastAsPossible, clock: clock)
        let beekon = Beekon(dependencies: BeekonDependencies(
            databasePath: dir + "/fidelity.sqlite", provider: provider, clock: clock))
        try await beekon.configure(config)
        try await beekon.start()
        await beekon.waitUntilSourceEnds()
        try await beekon.stop()
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture)
        let errors = TrackError.distances(
            from: fixes.filter { $0.latitude.isFinite && $0.longitude.isFinite },
            to: stored.map { ($0.latitude, $0.longitude) }).sorted()
        let p95 = errors.isEmpty ? 0 : errors[min(errors.count - 1, Int((Double(errors.count) * 0.95).rounded(.up)) - 1)]
        return FidelityReport(name: name, raw: fixes.count, stored: stored.count, maxError: errors.last ?? 0, p95Error: p95)
    }
}

/// Distance from points to a polyline on a local flat projection (metres; exact enough at track scale).
enum TrackError {
    static func distances(from raw: [RawFix], to line: [(Double, Double)]) -> [Double] {
        guard let first = line.first else { return [] }
        let lat0 = first.0 * .pi / 180
        let k = 6_371_008.8 * .pi / 180
        func xy(_ lat: Double, _ lon: Double) -> (Double, Double) { (lon * k * cos(lat0), lat * k) }
        let pts = line.map { xy($0.0, $0.1) }
        return raw.map { fix in
            let p = xy(fix.latitude, fix.longitude)
            if pts.count == 1 { return hypot(p.0 - pts[0].0, p.1 - pts[0].1) }
            var best = Double.infinity
            for (a, b) in zip(pts, pts.dropFirst()) {
                let dx = b.0 - a.0, dy = b.1 - a.1
                let len2 = dx * dx + dy * dy
                let t = len2 == 0 ? 0 : max(0, min(1, ((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2))
                best = min(best, hypot(p.0 - (a.0 + t * dx), p.1 - (a.1 + t * dy)))
            }
            return best
        }
    }
}
