import ArgumentParser
import BeekonChaos
import Foundation
import PostgresTestCluster
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `beekon-chaos`: the long chaos run of scripts/chaos.sh. Real `beekon track` agents upload
/// through the fault-injecting `ChaosProxy` to a real `beekon-ingest`; agents and server are
/// SIGKILLed and restarted at random moments; live viewers drop and resume with
/// `Last-Event-ID`. At the end of each trial every agent's history is compared with the
/// server's stored fixes (read API, paged). Every socket is on 127.0.0.1; every wait is bounded.
///
/// Invariants per trial: every fix an agent stored is at the server exactly once (lost); no
/// fix at the server that no agent stored (foreign); no fix id in two batch ids, none twice
/// at the server (duplicated); one session id per agent across its restarts
/// (session_changes); no 500 (or 400/413/415/422) to a batch while the database was up
/// (server_errors); no process died that the harness did not kill, agents exit 0 or 3
/// (crashes); every viewer received exactly the stored fixes, none twice, ids increasing
/// (viewer_lost, viewer_dup). Exit status 0 when every trial kept every invariant, else 1.
@main
struct BeekonChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beekon-chaos", abstract: "Real agents and servers under faults and SIGKILLs; checks loss, duplicates, crashes.")

    @Option(help: "Trials to run.") var trials = 3
    @Option(help: "Seed of every random choice.") var seed = 1
    @Option(help: "Server store: sqlite or postgres (one shared cluster, restarted at random).") var store = "sqlite"
    @Option(help: "Agents per trial.") var agents = 2
    @Option(help: "Seconds of chaos per trial.") var duration = 20.0
    @Option(help: "The agents' --drain-timeout, seconds.") var drainTimeout = 40
    @Option(help: "Trials run side by side.") var jobs = 1
    @Option(help: "Replay speeds to pick from.") var speeds = "max,60,120,240"
    @Option(help: "key (static API key), tokens (rotating tokens, refresh faults) or mixed (a per-trial pick).") var auth = "mixed"
    @Option(help: "auto: put one agent's database on a small tmpfs and fill it (needs root); off.") var diskFull = "auto"
    @Option(help: "Live-stream viewers per trial (random drops, Last-Event-ID resume).") var viewers = 2
    @Flag(help: "Keep the work directory.") var keep = false
    @Option(help: "The beekon agent binary.") var beekon: String
    @Option(help: "The beekon-ingest binary.") var ingest: String
    @Option(help: "The recordings' directory (the repository's Tests/Data).") var data: String

    func validate() throws {
        guard ChaosOptions.Store(rawValue: store) != nil else { throw ValidationError("--store: sqlite or postgres") }
        guard ChaosOptions.Auth(rawValue: auth) != nil else { throw ValidationError("--auth: key, tokens or mixed") }
        guard ["auto", "off"].contains(diskFull) else { throw ValidationError("--disk-full: auto or off") }
        guard trials >= 0, agents >= 1, jobs >= 1, viewers >= 0, duration > 0, drainTimeout > 0 else {
            throw ValidationError("--trials, --agents, --jobs, --viewers, --duration and --drain-timeout must be positive")
        }
        for binary in [beekon, ingest] where !FileManager.default.isExecutableFile(atPath: binary) {
            throw ValidationError("\(binary) is not an executable")
        }
    }

    func run() async throws {
        let options = ChaosOptions(
            trials: trials, seed: seed, store: ChaosOptions.Store(rawValue: store)!, agents: agents, duration: duration,
            drainTimeout: drainTimeout, jobs: jobs, speeds: speeds.split(separator: ",").map(String.init),
            auth: ChaosOptions.Auth(rawValue: auth)!, diskFull: diskFull == "auto", viewers: viewers, keep: keep,
            beekon: URL(fileURLWithPath: beekon), ingest: URL(fileURLWithPath: ingest), data: URL(fileURLWithPath: data))
        let workdir = try ChaosDir()
        chmod(workdir.url.path, 0o755)
        ChaosLog.line("seed \(seed), \(trials) trials, store \(store), work dir \(workdir.url.path)")
        let cluster = options.store == .postgres ? try PostgresCluster.start() : nil
        defer { cluster?.stop() }
        let shared = SharedDatabase(cluster: cluster, diskFull: options.diskFull)
        let started = ContinuousClock.now
        let outcomes = await ChaosRunner(options: options, workdir: workdir, shared: shared).runAll()
        var totals = TrialResult()
        var faults: [String: Int] = [:]
        for outcome in outcomes {
            totals.add(outcome.result)
            faults.merge(outcome.faults, uniquingKeysWith: +)
        }
        let failed = outcomes.filter(\.result.failed).map(\.trial).sorted()
        if keep || !failed.isEmpty {
            workdir.keep()
            ChaosLog.line("kept \(workdir.url.path)" + (failed.isEmpty ? "" : " for the failed trials \(failed)"))
        }
        let elapsed = ContinuousClock.now - started
        let summary = ChaosSummary(
            options: options, totals: totals, faults: faults, diskFullOn: shared.diskFullOn,
            elapsedSeconds: Double(elapsed.components.seconds), failedTrials: failed)
        print(summary.text)
        if !failed.isEmpty { throw ExitCode(1) }
    }
}
