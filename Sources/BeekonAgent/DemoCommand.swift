import BeekonWire
import ArgumentParser
import Beekon
import BeekonPrimitives
import BeekonSources
import Foundation
import Logging

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Replay the bundled sample track into a local database and summarise it.")

    @Option(name: .long, help: "Database to (re)create for the demo.")
    var db: String = "beekon-demo.sqlite"

    @Option(name: .long, help: "Preset: saver, balanced or precision.")
    var preset: String = "balanced"

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = .warning
            return h
        }
        guard let preset = Preset(rawValue: preset) else {
            Terminal.error("--preset must be saver, balanced or precision")
            throw ExitCode(2)
        }
        guard let url = Bundle.module.url(forResource: "visnjan", withExtension: "gpx", subdirectory: "Samples") else {
            Terminal.error("the sample track is missing from the installation")
            throw ExitCode(1)
        }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
        let clock = ReplayClock()
        let provider = try ReplayProvider(contentsOf: url, speed: .asFastAsPossible, clock: clock)
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: db, provider: provider, clock: clock))
        try await beekon.configure(BeekonConfig(preset: preset))
        try await beekon.start()
        await beekon.waitUntilSourceEnds()
        try await beekon.stop()
        let stats = await beekon.statistics
        let rows = try await beekon.history(from: .distantPast, to: .distantFuture)
        var meters = 0.0
        for (a, b) in zip(rows, rows.dropFirst()) { meters += Geodesy.distance(a.latitude, a.longitude, b.latitude, b.longitude) }
        let report = try await beekon.storeReport()
        Terminal.out(
            """
            Beekon demo — sample track: Višnjan walk (gpxgo, Apache-2.0), preset \(preset.rawValue) \
            (\(Int(preset.minTimeBetweenLocationsSeconds)) s / \(Int(preset.minDistanceBetweenLocationsMeters)) m)
              fixes read      \(stats.received)
              fixes stored    \(stats.stored) (\(percent(stats.stored, stats.received)) of raw)
              rejected        \(stats.tooSoon) too soon, \(stats.tooClose) too close, \(stats.notLater) not later
              time span       \(rows.first.map { WireTimestamp($0.timestamp).description } ?? "-") → \(rows.last.map { WireTimestamp($0.timestamp).description } ?? "-")
              stored path     \(String(format: "%.2f", meters / 1000)) km
              session         \(report.lastSessionID?.wireString ?? "-")
              database        \(db)
            Next: swift run beekon history --db \(db) --format geojson
                  swift run beekon status --db \(db)
            """)
    }

    private func percent(_ a: Int, _ b: Int) -> String {
        b == 0 ? "0%" : String(format: "%.1f%%", Double(a) * 100 / Double(b))
    }
}
