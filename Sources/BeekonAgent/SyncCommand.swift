import ArgumentParser
import Beekon
import Foundation

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Upload pending fixes once (uses the config file's sync block); exit 0 when nothing is pending.")

    @OptionGroup var database: DatabaseOptions

    @Option(name: .long, help: "JSON config file with a sync block.")
    var config: String

    @Option(name: .long, help: "Seconds to keep retrying transient failures.")
    var drainTimeout: Double = 60

    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = log.bootstrap()
        guard let agentConfig = try loadConfig(config), agentConfig.sdk.sync != nil else {
            Terminal.error("bad config: \(config) has no 'sync' block")
            throw ExitCode(2)
        }
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: database.db, provider: NoSource(), logger: logger, transport: try AgentTransport.make(agentConfig)))
        do {
            try await beekon.configure(agentConfig.sdk)
            if let extras = agentConfig.extras { try await beekon.setExtras(extras) }
        } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        try await FinalDrain(beekon: beekon).run(timeout: drainTimeout)
    }
}
