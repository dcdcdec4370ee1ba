import ArgumentParser
import Beekon
import BeekonBeacons
import BeekonWire
import Foundation
import Logging

/// `beekon beacons`: the proximity events of a beacon recording, one per line (SPEC BY-5).
struct BeaconsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacons",
        abstract: "Print the proximity events (enter/exit) of a beacon recording, one per line.",
        discussion: """
            --source replay:FILE reads a btsnoop capture (btmon -w, Android HCI snoop log; datalinks \
            1001, 1002, 2001) or a JSON scan log (concatenated objects with scannerID, uuid, major, \
            minor, calibratedPower, rssi, time in Unix ms), gzipped or not. RSSI is smoothed over a \
            window with outliers trimmed, turned into metres by the distance model, and a beacon \
            enters when it stays within --enter-distance for --dwell seconds; it exits beyond \
            --exit-distance (same dwell) or after --silence seconds unheard. Options override --beacons. \
            With --config (an agent config with sync), the events are also stored in the agent's \
            database and uploaded (beacons-only mode; exit codes as for track's final drain).
            """)

    @Option(name: .long, help: "Recording to replay: replay:FILE.")
    var source: String

    @Option(name: .long, help: "Only the readings of this scanner (the scannerID of a multi-scanner log).")
    var scanner: String?

    @Option(name: .long, help: "Name of the scanner of a btsnoop capture.")
    var scannerName = "btsnoop"

    @Option(name: .long, help: "Ranging configuration (JSON: regions, distances, dwell, smoothing, model).")
    var beacons: String?

    @Option(name: .long, help: "Enter at or under this smoothed distance, in metres (default 1).")
    var enterDistance: Double?

    @Option(name: .long, help: "Exit at or over this distance, in metres (default 2).")
    var exitDistance: Double?

    @Option(name: .long, help: "Seconds a condition must hold (default 3).")
    var dwell: Double?

    @Option(name: .long, help: "Seconds unheard before an entered beacon exits (default 30).")
    var silence: Double?

    @Option(name: .long, help: "Output: ndjson or text.")
    var format: OutputFormat = .ndjson

    @Option(name: .long, help: "Agent config (JSON, SDK field names): store the events and upload them to its sync url.")
    var config: String?

    @Option(name: .long, help: "With --config: path of the agent's SQLite database (default: STATE_DIR/beekon.sqlite).")
    var db: String?

    @Option(name: .long, help: "With --config: state directory for the database.")
    var stateDir: String?

    @Option(name: .long, help: "With --config: seconds to wait for the uploads to drain before exiting.")
    var drainTimeout: Double = 60

    @OptionGroup var log: LogOptions

    enum OutputFormat: String, ExpressibleByArgument { case ndjson, text }

    func run() async throws {
        guard source.hasPrefix("replay:"), source.count > "replay:".count else {
            Terminal.error("--source must be replay:FILE")
            throw ExitCode(2)
        }
        var config = BeaconRangingConfig()
        if let beacons { config = try BeaconOptions.load(beacons) }
        let logger = log.bootstrap()
        let agentConfig = try loadConfig(self.config)
        let enter = enterDistance ?? config.rule.enterDistance
        let exit = exitDistance ?? max(config.rule.exitDistance, enter * 2)
        guard enter > 0, exit > enter, (dwell ?? 0) >= 0, (silence ?? 1) > 0 else {
            Terminal.error("need 0 < --enter-distance < --exit-distance, --dwell ≥ 0 and --silence > 0")
            throw ExitCode(2)
        }
        config.rule = ProximityRule(
            enterDistance: enter, exitDistance: exit, dwell: dwell ?? config.rule.dwell,
            silenceTimeout: silence ?? config.rule.silenceTimeout)
        let path = String(source.dropFirst("replay:".count))
        let result = BeaconRecording.read(contentsOf: URL(fileURLWithPath: path), scanner: scannerName)
        for message in result.messages { Terminal.error(message) }
        guard !result.readings.isEmpty || result.errorCount == 0 else {
            Terminal.error("\(path): no beacon readings (\(result.summary))")
            throw ExitCode(1)
        }
        var tracker = config.makeTracker()
        let events = BeaconReplay.events(of: result.readings, scanner: scanner, tracker: &tracker)
        for event in events { Terminal.out(format == .ndjson ? Self.json(event) : Self.text(event)) }
        FileHandle.standardError.write(Data("\(path): \(result.summary); \(events.count) events\n".utf8))
        if let agentConfig { try await upload(events, config: agentConfig, logger: logger) }
    }

    /// Beacons-only mode: stores `events` in the agent's database and drains them to the sync url.
    private func upload(_ events: [ProximityEvent], config: AgentConfig, logger: Logger) async throws {
        guard config.sdk.sync != nil else {
            Terminal.error("--config: no sync url, nothing to upload to")
            throw ExitCode(2)
        }
        let dbPath: String
        do { dbPath = try StateLocation.databasePath(db: db, stateDir: stateDir) } catch {
            Terminal.error(error.description)
            throw ExitCode(2)
        }
        let beekon = Beekon(
            dependencies: BeekonDependencies(
                databasePath: dbPath, provider: NoLocationProvider(), logger: logger, transport: try AgentTransport.make(config)))
        do {
            try await beekon.configure(config.sdk)
            if let extras = config.extras { try await beekon.setExtras(extras) }
            try await beekon.recordProximity(events)
        } catch {
            Terminal.error(error.description)
            throw ExitCode(1)
        }
        try await FinalDrain(beekon: beekon).run(timeout: drainTimeout)
        await beekon.shutdown()
    }

    static func json(_ e: ProximityEvent) -> String {
        var fields = ["\"uuid\":\"\(e.identity.uuid)\""]
        fields.append("\"major\":\(e.identity.major.map(String.init) ?? "null")")
        fields.append("\"minor\":\(e.identity.minor.map(String.init) ?? "null")")
        fields.append("\"scanner\":\(quoted(e.scanner))")
        fields.append("\"region\":\(quoted(e.region))")
        fields.append("\"type\":\"\(e.type.rawValue)\"")
        fields.append("\"timestamp\":\"\(timestamp(e.timestamp))\"")
        fields.append("\"distance\":\(e.distance.map { String(format: "%.2f", $0) } ?? "null")")
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func text(_ e: ProximityEvent) -> String {
        let d = e.distance.map { String(format: "%.2f m", $0) } ?? "silent"
        return "\(timestamp(e.timestamp)) \(e.type.rawValue) \(e.scanner) \(e.identity) \(d)"
    }

    static func timestamp(_ date: Date) -> String {
        WireTimestamp(date).description
    }

    static func quoted(_ s: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [s], options: [.fragmentsAllowed])) ?? Data("[\"\"]".utf8)
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}
