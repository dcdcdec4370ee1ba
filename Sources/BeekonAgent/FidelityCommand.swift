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
            (--turn-degrees, default 30), then with error-bounded admission (maxDeviationMeters = \
            --tolerance, default 25; `deviation` with the stationary policy off, `faithful` as \
            BeekonConfig.faithful), next to offline Douglas–Peucker at the same tolerance over the \
            same fixes (`douglas-peucker`, the whole track known in advance: the reference).
            """)

    @Option(name: .long, help: "Track to replay: replay:PATH (GPX, TCX, NMEA, CSV, NDJSON).")
    var source: String

    @Option(name: .long, help: "Also measure this JSON config file.")
    var config: String?

    @Option(name: .long, help: "Heading change (degrees) for the turn-aware rows.")
    var turnDegrees: Double = 30

    @Option(name: .long, help: "Tolerance (metres) for the error-bounded and Douglas–Peucker rows.")
    var tolerance: Double = 25

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
            variants.append(
                (
                    "\(preset.rawValue)+turn\(Int(turnDegrees))",
                    BeekonConfig(preset: preset, whenStationary: .keepTracking, turnThresholdDegrees: turnDegrees)
                ))
        }
        guard tolerance.isFinite, tolerance >= 1, tolerance <= 100_000 else {
            Terminal.error("--tolerance must be within 1…100000 metres")
            throw ExitCode(2)
        }
        let t = Int(tolerance)
        variants.append(("deviation\(t)", BeekonConfig(whenStationary: .keepTracking, maxDeviationMeters: tolerance)))
        variants.append(("faithful\(t)", .faithful(maxDeviationMeters: tolerance)))
        if let agentConfig {
            var c = agentConfig.sdk
            c.sync = nil
            variants.append(("config", c))
        }
        var rows: [FidelityReport] = []
        for (name, config) in variants {
            rows.append(try await FidelityReport.measure(name: name, fixes: track.fixes, config: config))
        }
        rows.append(FidelityReport.douglasPeucker(name: "douglas-peucker\(t)", fixes: track.fixes, tolerance: tolerance))
        if json {
            let items = rows.map {
                "{\"config\":\"\($0.name)\",\"raw\":\($0.raw),\"stored\":\($0.stored),\"stored_percent\":\(fmt($0.storedPercent)),"
                    + "\"max_error_m\":\(fmt($0.maxError)),\"p95_error_m\":\(fmt($0.p95Error))}"
            }
            Terminal.out("[" + items.joined(separator: ",") + "]")
        } else {
            Terminal.out("track: \(path) (\(track.fixes.count) raw fixes)")
            Terminal.out("config".padding(toLength: 22, withPad: " ", startingAt: 0) + "  stored   % raw   max m   p95 m")
            for r in rows {
                Terminal.out(
                    r.name.padding(toLength: 22, withPad: " ", startingAt: 0)
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
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dir + "/fidelity.sqlite", provider: provider, clock: clock))
        try await beekon.configure(config)
        try await beekon.start()
        await beekon.waitUntilSourceEnds()
        try await beekon.stop()
        let stored = try await beekon.history(from: .distantPast, to: .distantFuture)
        return report(
            name: name, raw: fixes.count, line: stored.map { ($0.latitude, $0.longitude) },
            fixes: fixes.filter { $0.latitude.isFinite && $0.longitude.isFinite })
    }

    /// Offline Douglas–Peucker over the fixes the SDK accepts (valid, strictly later in time).
    static func douglasPeucker(name: String, fixes: [RawFix], tolerance: Double) -> FidelityReport {
        var accepted: [RawFix] = []
        for f in fixes
        where abs(f.latitude) <= 90 && abs(f.longitude) <= 180
            && accepted.last.map({ millis(f) > millis($0) }) ?? true
        {
            accepted.append(f)
        }
        let points = accepted.map { ($0.latitude, $0.longitude) }
        let kept = TrackDeviation.douglasPeucker(points, tolerance: tolerance).map { points[$0] }
        return report(name: name, raw: fixes.count, line: kept, fixes: accepted)
    }

    /// Fix time at the store's precision: the SDK rejects a fix not later than the previous one.
    private static func millis(_ f: RawFix) -> Double { (f.timestamp.timeIntervalSince1970 * 1000).rounded(.down) }

    private static func report(name: String, raw: Int, line: [(Double, Double)], fixes: [RawFix]) -> FidelityReport {
        let errors = TrackDeviation.distances(from: fixes.map { ($0.latitude, $0.longitude) }, to: line).sorted()
        let p95 = errors.isEmpty ? 0 : errors[min(errors.count - 1, Int((Double(errors.count) * 0.95).rounded(.up)) - 1)]
        return FidelityReport(name: name, raw: raw, stored: line.count, maxError: errors.last ?? 0, p95Error: p95)
    }
}
