import ArgumentParser
import Beekon
import BeekonWire
import Foundation
import Logging

@main
struct BeekonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beekon",
        abstract: "Beekon tracking agent: track from a location source, store durably, export history.",
        version: BeekonVersion.current,
        subcommands: [
            TrackCommand.self, HistoryCommand.self, StatusCommand.self, SyncCommand.self, StopCommand.self, FidelityCommand.self,
            DemoCommand.self, BeaconsCommand.self, ActivityCommand.self, LogsCommand.self, LocateCommand.self,
        ]
    )
}

/// Options shared by every command that opens a database.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "Path of the agent's SQLite database.")
    var db: String
}

/// Where a command that keeps tracking state finds its database (`track`, `locate`):
/// `--db`, else `--state-dir`, else the service's state directory (see `StateLocation`).
struct StateOptions: ParsableArguments {
    @Option(name: .long, help: "Path of the agent's SQLite database (default: STATE_DIR/beekon.sqlite).")
    var db: String?

    @Option(name: .long, help: "State directory for the database (default under systemd: $STATE_DIRECTORY or /var/lib/beekon).")
    var stateDir: String?

    /// The database path, or exit code 2 with a one-line message.
    func databasePath() throws -> String {
        do { return try StateLocation.databasePath(db: db, stateDir: stateDir) } catch {
            Terminal.error(error.description)
            throw ExitCode(2)
        }
    }
}

/// Log level option; logs are plain lines on stderr (journald-friendly).
struct LogOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    func bootstrap() -> Logger {
        let level = Logger.Level(rawValue: logLevel) ?? .notice
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "beekon")
    }
}

/// Loads the config file or exits with code 2 and a one-line message.
func loadConfig(_ path: String?) throws -> AgentConfig? {
    guard let path else { return nil }
    do { return try AgentConfig.load(path: path) } catch {
        Terminal.error("bad config: \(error.description)")
        throw ExitCode(2)
    }
}
