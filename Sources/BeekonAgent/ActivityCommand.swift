import ArgumentParser
import Beekon
import BeekonWire
import BeekonSources
import Foundation

/// `beekon activity`: the activity classifier's confusion table on a labelled track, or its
/// evaluation on a labelled set, or the training of its model (BY-4).
struct ActivityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract: "Judge the activity classifier on a labelled track or set, or train its model.",
        discussion: """
            Truth per fix: stationary when the median ground speed over the 30 s centred on it is \
            below 0.5 m/s, else the recording's label. `moving correct` is the share of moving fixes \
            classified as the label; `moving wrong` the share classified as another activity (not unknown).

            --evaluate DIR: DIR holds labelled recordings (a SPLIT.md table naming training and \
            evaluation recordings, else one subdirectory per mode: walking, running, cycling, \
            automotive, train). Prints the confusion of moving fixes per mode and per recording for \
            the evaluation set and the training set with the shipped model, then \
            leave-one-recording-out (each recording judged by a model trained on all the others) \
            and leave-one-source-out (trained on the other sources' recordings only; a recording's \
            source is its file name up to the first _).

            --train DIR: prints the Swift source of a model trained on DIR's training recordings \
            only (scripts/train-activity.sh writes it to Sources/Beekon/Activity/ActivityModel+Trained.swift).
            """)

    @Option(name: .long, help: "Track to classify: replay:PATH (GPX, TCX, NMEA, CSV, NDJSON).")
    var source: String?

    @Option(name: .long, help: "A labelled set to evaluate the classifier on (see the discussion).")
    var evaluate: String?

    @Option(name: .long, help: "A labelled set whose training recordings to train the model on; prints Swift source.")
    var train: String?

    @Flag(name: .long, help: "With --train: print the training recordings' features as CSV instead (for analysis).")
    var features = false

    @Option(name: .long, help: "The track's activity while moving: walking, running, cycling, automotive (default unknown: unlabelled).")
    var label: String = "unknown"

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        if let dir = evaluate ?? train {
            guard source == nil, evaluate == nil || train == nil else {
                Terminal.error("use one of --source, --evaluate, --train")
                throw ExitCode(2)
            }
            let set: LabelledSet
            do { set = try LabelledSet.load(URL(fileURLWithPath: dir)) } catch {
                Terminal.error(error.description)
                throw ExitCode(1)
            }
            if train != nil {
                let training = set.recordings.filter(\.training)
                guard !training.isEmpty else {
                    Terminal.error("\(dir): no training recording (SPLIT.md names none)")
                    throw ExitCode(1)
                }
                if features {
                    print("recording,mode," + ActivityFeatures.names.joined(separator: ","))
                    for r in training {
                        for x in ActivityModel.trainingFeatures(r.fixes) {
                            print("\(r.name),\(r.mode)," + x.map { String(format: "%.4f", $0) }.joined(separator: ","))
                        }
                    }
                    return
                }
                let header = "Trained on: " + training.map(\.name).joined(separator: ", ")
                print(ActivityEvaluation.train(set).swiftSource(header: header), terminator: "")
            } else {
                print(ActivityEvaluation(set, leaveOneOut: true).report)
            }
            return
        }
        guard let source, case .replay(let path)? = try? SourceSpec(argument: source) else {
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
