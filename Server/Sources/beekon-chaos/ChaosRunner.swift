import BeekonChaos
import Foundation

/// Runs a chaos run's trials, `--jobs` side by side, and logs each one's outcome as it ends.
struct ChaosRunner: Sendable {
    /// One trial's result and the faults it injected.
    struct Outcome: Sendable {
        var trial: Int
        var result: TrialResult
        var faults: [String: Int]
    }

    let options: ChaosOptions
    let workdir: ChaosDir
    let shared: SharedDatabase

    /// Every trial's outcome.
    func runAll() async -> [Outcome] {
        await withTaskGroup(of: Outcome.self) { group in
            var next = 0
            var outcomes: [Outcome] = []
            func add() {
                guard next < options.trials else { return }
                let index = next
                next += 1
                group.addTask { await one(index) }
            }
            for _ in 0..<options.jobs { add() }
            while let outcome = await group.next() {
                outcomes.append(outcome)
                add()
            }
            return outcomes
        }
    }

    private func one(_ index: Int) async -> Outcome {
        var result = TrialResult()
        var faults: [String: Int] = [:]
        var auth = "?"
        do {
            let trial = try Trial(options: options, index: index, workdir: workdir, shared: shared)
            auth = trial.auth.rawValue
            do {
                result = try await trial.run()
            } catch {
                result["crashes"] = 1
                result.problems = ["harness: \(error)"] + trial.tally.crashes
            }
            await trial.cleanup()
            faults = trial.tally.snapshot
        } catch {
            result["crashes"] = 1
            result.problems = ["harness: \(error)"]
        }
        ChaosLog.line(
            "trial \(index): stored \(result["stored"]) at server \(result["at_server"]) lost \(result["lost"]) "
                + "dup \(result["duplicated"]) crashes \(result["crashes"]) auth \(auth) faults {\(faults.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))}"
                + (result.failed ? "  FAILED" : ""))
        for problem in result.problems.prefix(10) { ChaosLog.line("  trial \(index): \(problem)") }
        return Outcome(trial: index, result: result, faults: faults)
    }
}
