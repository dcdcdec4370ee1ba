import ArgumentParser
import Beekon
import BeekonSources
import Foundation

/// `beekon locate`: answers one pending locate request and exits (cron- or hook-driven
/// devices). Exit 0 when a request was answered or refused, or when none was pending.
struct LocateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "locate",
        abstract: "Answer one pending locate request from the server and exit.",
        discussion: """
            Asks the server's command channel for an open request (waiting up to --wait
            seconds), takes one fresh fix from --source, stores it (trigger manual, with the
            request id) and uploads it; or refuses with a reason (config key locate.sharing
            false, locate.minIntervalSeconds, no fix within locate.timeoutSeconds).
            """)

    @OptionGroup var sourceOptions: SourceOptions

    @OptionGroup var state: StateOptions

    @Option(name: .long, help: "JSON config file (SDK field names); needs a sync block.")
    var config: String

    @Option(name: .long, help: "Seconds to wait for a request to arrive (0-60).")
    var wait: Double = 0

    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = log.bootstrap()
        let agentConfig = try loadConfig(config)
        guard agentConfig?.sdk.sync != nil else {
            Terminal.error("locate needs a config with a sync block (the server to ask)")
            throw ExitCode(2)
        }
        guard wait.isFinite, (0...60).contains(wait) else {
            Terminal.error("--wait must be 0 to 60 seconds")
            throw ExitCode(2)
        }
        let spec = try sourceOptions.spec()
        let dbPath = try state.databasePath()
        let grace = try sourceOptions.grace(default: 10)
        let clock = ReplayClock()
        let provider = try sourceOptions.provider(
            spec, replay: .oneShot, clock: clock, grace: grace, events: SourceEventLog(logger: logger))
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dbPath, provider: provider, logger: logger,
                transport: try AgentTransport.make(agentConfig)))
        do {
            if let agentConfig {
                try await beekon.configure(agentConfig.sdk)
                if let policy = agentConfig.locate { await beekon.setLocatePolicy(policy) }
            }
        } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        let poll = await beekon.pendingLocateRequests(wait: .milliseconds(Int(wait * 1000)))
        if case .unsupported(let status) = poll {
            Terminal.error("the server has no locate command channel (HTTP \(status) on /v1/devices/…/commands)")
            await beekon.shutdown()
            throw ExitCode(1)
        }
        guard let id = poll.ids.first else {
            Terminal.out("no pending locate request")
            await beekon.shutdown()
            return
        }
        switch await beekon.handleLocateRequest(id: id) {
        case .answered(let location):
            Terminal.out("answered locate request \(id.wireString) with fix \(location.id.wireString)")
        case .refused(let reason):
            Terminal.out("refused locate request \(id.wireString): \(reason)")
        }
        await beekon.shutdown()
    }
}
