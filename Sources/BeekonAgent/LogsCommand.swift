import ArgumentParser
import BeekonWire
import Beekon
import Foundation

/// `beekon logs`: exports the SDK's diagnostic log (BY-6) for a support engineer.
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Export the diagnostic log (state changes, source events, sync outcomes, profile switches).",
        discussion: """
            Reads the database read-only (the agent may be running). Coordinates are redacted \
            unless --coordinates is given; tokens are never logged.
            """)

    @OptionGroup var database: DatabaseOptions

    @Option(name: .long, help: "Only entries at or after this time (ISO 8601).")
    var since: String?

    @Option(name: .long, help: "ndjson (default) or text.")
    var format: String = "ndjson"

    @Flag(name: .long, help: "Keep coordinates in the export (redacted by default).")
    var coordinates = false

    func run() async throws {
        guard format == "ndjson" || format == "text" else {
            Terminal.error("--format must be one of ndjson, text (got '\(format)')")
            throw ExitCode(2)
        }
        let from = since.flatMap { WireTimestamp(iso8601: $0)?.date }
        if let since, from == nil {
            Terminal.error("--since must be an ISO 8601 date or date-time (got '\(since)')")
            throw ExitCode(2)
        }
        let entries: [DiagnosticEntry]
        do {
            entries = try await Beekon.diagnosticLog(databaseAt: database.db, since: from, includeCoordinates: coordinates)
        } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        let out = entries.map { format == "text" ? $0.text : $0.ndjson }.joined(separator: "\n")
        FileHandle.standardOutput.write(Data((out.isEmpty ? "" : out + "\n").utf8))
    }
}
