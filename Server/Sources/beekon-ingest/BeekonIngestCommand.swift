import ArgumentParser
import BeekonIngest
import BeekonWire
import Foundation
import Logging

/// `beekon-ingest`: the reference backend for Beekon uploads.
@main
struct BeekonIngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beekon-ingest",
        abstract: "Receives Beekon schema-v1 uploads, dedupes and stores them, and serves them back.",
        version: BeekonVersion.current,
        subcommands: [Serve.self, IssueToken.self, ShareCommand.self],
        defaultSubcommand: Serve.self)
}

/// Options shared by the subcommands.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "sqlite:PATH or postgres://user:password@host:port/db[?sslmode=disable|prefer|require]. Env: BEEKON_DATABASE.")
    var database: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical. Env: LOG_LEVEL.")
    var logLevel: String?

    func location() throws -> DatabaseLocation {
        let text = database ?? ProcessInfo.processInfo.environment["BEEKON_DATABASE"] ?? "sqlite:beekon-ingest.sqlite"
        return try DatabaseLocation(parsing: text)
    }

    func logger() -> Logger {
        var logger = Logger(label: "beekon-ingest")
        let level = logLevel ?? ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "info"
        logger.logLevel = Logger.Level(rawValue: level) ?? .info
        return logger
    }
}
