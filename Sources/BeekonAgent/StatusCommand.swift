import BeekonWire
import ArgumentParser
import Beekon
import Foundation

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the state of an agent's database (safe while the agent runs).")

    @OptionGroup var database: DatabaseOptions

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func run() async throws {
        let report: StoreReport
        do { report = try await Beekon.inspect(databaseAt: database.db) } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        let state: String
        if report.trackingIntent != nil {
            state = "tracking (or will resume on next start)"
        } else if let reason = report.lastSessionStopReason {
            state = "stopped(\(reason.rawValue))"
        } else {
            state = "idle"
        }
        let fields: [(String, String?)] = [
            ("state", state),
            ("session_id", (report.trackingIntent ?? report.lastSessionID)?.wireString),
            ("tracking_intent", report.trackingIntent != nil ? "true" : "false"),
            ("motion", report.motion.rawValue),
            ("geofences", String(report.geofenceCount)),
            ("install_id", report.installID?.wireString),
            ("sessions", String(report.sessionCount)),
            ("locations", String(report.locationCount)),
            ("geofence_events", String(report.geofenceEventCount)),
            ("oldest_fix", report.oldestFix.map { WireTimestamp($0).description }),
            ("newest_fix", report.newestFix.map { WireTimestamp($0).description }),
            ("trimmed_rows_total", String(report.trimmedRowsTotal)),
            ("aged_rows_total", String(report.agedRowsTotal)),
            ("pending_uploads", String(report.pendingUploads)),
            ("open_batches", String(report.openBatches)),
            ("rejected_locations", String(report.rejectedLocations)),
            ("trimmed_unsent_total", String(report.trimmedUnsentTotal)),
            ("last_sync", report.lastSyncOutcome),
            ("last_upload_error", report.lastUploadError),
        ]
        if json {
            var w = WireJSONWriter()
            w.raw("{")
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(key)
                w.raw(":")
                if let value, let n = Int(value) {
                    w.raw(String(n))
                } else if key == "tracking_intent" {
                    w.raw(value ?? "false")
                } else if let value {
                    w.string(value)
                } else {
                    w.raw("null")
                }
            }
            w.raw("}")
            Terminal.out(String(decoding: w.bytes, as: UTF8.self))
        } else {
            for (key, value) in fields { Terminal.out("\(key.padding(toLength: 19, withPad: " ", startingAt: 0)) \(value ?? "-")") }
        }
    }
}

struct StopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Clear the tracking intent so the agent does not resume on its next start.")

    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let beekon = Beekon(dependencies: BeekonDependencies(databasePath: database.db, provider: NoSource()))
        do { try await beekon.stop() } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        Terminal.out("tracking intent cleared")
    }
}
