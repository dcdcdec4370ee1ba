import BeekonWire
import ArgumentParser
import Beekon
import BeekonSources
import Foundation

struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Export stored fixes in time order to stdout.")

    @OptionGroup var database: DatabaseOptions

    @Option(name: .long, help: "Start (ISO 8601, e.g. 2026-06-15 or 2026-06-15T12:00:00Z).")
    var from: String?

    @Option(name: .long, help: "End (ISO 8601), inclusive.")
    var to: String?

    @Option(name: .long, help: "ndjson, geojson, gpx or csv.")
    var format: String = "ndjson"

    @Flag(name: .long, help: "Export the fixes the server rejected (400/422) instead.")
    var rejected = false

    @Flag(name: .long, help: "List geofence events (NDJSON) instead of fixes.")
    var events = false

    func run() async throws {
        guard let fmt = ExportFormat(rawValue: format.lowercased()) else {
            Terminal.error("--format must be one of ndjson, geojson, gpx, csv (got '\(format)')")
            throw ExitCode(2)
        }
        let lo = try parseDate(from, name: "--from") ?? .distantPast
        let hi = try parseDate(to, name: "--to") ?? .distantFuture
        guard FileManager.default.fileExists(atPath: database.db) else {
            Terminal.error("no database at \(database.db)")
            throw ExitCode(1)
        }
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: database.db, provider: NoSource()))
        if events {
            do {
                var out = ""
                for e in try await beekon.geofenceEventHistory(from: lo, to: hi) {
                    var w = WireJSONWriter(capacity: 160)
                    w.write(e.wire)
                    out += String(decoding: w.bytes, as: UTF8.self) + "\n"
                }
                FileHandle.standardOutput.write(Data(out.utf8))
            } catch {
                Terminal.error(error.description)
                throw ExitCode(1)
            }
            return
        }
        let rows: [Location]
        do {
            rows =
                rejected
                ? try await beekon.rejectedLocations().filter { $0.timestamp >= lo && $0.timestamp <= hi }
                : try await beekon.history(from: lo, to: hi)
        } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        HistoryExporter { FileHandle.standardOutput.write(Data($0.utf8)) }.export(rows, as: fmt)
    }

    private func parseDate(_ text: String?, name: String) throws -> Date? {
        guard let text else { return nil }
        guard let t = WireTimestamp(iso8601: text) else {
            Terminal.error("\(name) must be an ISO 8601 date or date-time (got '\(text)')")
            throw ExitCode(2)
        }
        return t.date
    }
}

/// The provider for commands that only read: it never starts.
struct NoSource: LocationProvider {
    func start(mode: PowerMode) async throws -> AsyncThrowingStream<RawFix, any Error> {
        throw LocationProviderError.servicesDisabled("this command does not track")
    }
    func setPowerMode(_ mode: PowerMode) async {}
    func stop() async {}
}
