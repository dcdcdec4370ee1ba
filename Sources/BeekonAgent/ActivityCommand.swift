import ArgumentParser
import Beekon
import BeekonWire
import BeekonSources
import Foundation

/// `beekon activity`: the activity classifier's confusion table on a labelled track (BY-4).
struct ActivityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract: "Classify every fix of a track and print the confusion table against its label.",
        discussion: """
            Truth per fix: stationary when the median ground speed over the 30 s centred on it is \
            below 0.5 m/s, else --label. `moving correct` is the share of moving fixes classified \
            as the label; `moving wrong` the share classified as another activity (not unknown).
            """)

    @Option(name: .long, help: "Track to classify: replay:PATH (GPX, NMEA, CSV, NDJSON).")
    var source: String

    @Option(name: .long, help: "The track's activity while moving: walking, running, cycling, automotive (default unknown: unlabelled).")
    var label: String = "unknown"

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        guard case .replay(let path)? = try? SourceSpec(argument: source) else {
            Terminal.error("--source must be replay:PATH")
            throw ExitCode(2)
        }
        guard let activity = Activity(rawValue: label), activity != .stationary else {
            Terminal.error("--label must be one of walking, running, cycling, automotive, unknown")
            throw ExitCode(2)
        }
        let track: TrackReadResult
        do { track = try TrackFile.read(contentsOf: URL(fileURLWithPath: path)) } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        let result = ActivityConfusion(fixes: track.fixes, label: activity, classifier: SpeedActivityClassifier())
        if json {
            var rows: [String: [String: Int]] = [:]
            for (truth, row) in result.counts {
                rows[truth.rawValue] = Dictionary(uniqueKeysWithValues: row.map { ($0.key.rawValue, $0.value) })
            }
            let object: [String: Any] = [
                "track": URL(fileURLWithPath: path).lastPathComponent, "label": activity.rawValue, "counts": rows,
                "moving_correct": result.movingCorrect, "moving_wrong": result.movingWrong,
            ]
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(result.table)
            print(String(format: "moving correct %.1f %%, moving wrong %.1f %%", result.movingCorrect * 100, result.movingWrong * 100))
        }
    }
}
