import ArgumentParser
import BeekonBeacons
import Foundation
import Logging

/// `--beacons CONFIG` and `--beacon-source` of `beekon track` (SPEC BY-5).
struct BeaconOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "Range beacons beside the location source: ranging configuration (JSON: regions, distances, dwell, smoothing, model).")
    var beacons: String?

    @Option(
        name: .long,
        help: "With --beacons: replay:FILE (btsnoop capture or JSON scan log) or hci (the kernel's HCI monitor channel; needs CAP_NET_RAW)."
    )
    var beaconSource: String?

    /// The feed the options describe, nil without `--beacons`; a bad option or file exits 2 with one line.
    func feed(logger: Logger) throws -> BeaconFeed? {
        guard let beacons else {
            if beaconSource != nil {
                Terminal.error("--beacon-source needs --beacons CONFIG")
                throw ExitCode(2)
            }
            return nil
        }
        guard let argument = beaconSource, let source = BeaconFeed.source(argument) else {
            Terminal.error("--beacons needs --beacon-source replay:FILE or hci")
            throw ExitCode(2)
        }
        return BeaconFeed(source: source, config: try Self.load(beacons), logger: logger)
    }

    /// Reads a `--beacons` file; exits 2 with one line when it is unreadable or invalid.
    static func load(_ path: String) throws -> BeaconRangingConfig {
        do { return try BeaconRangingConfig.parse(try Data(contentsOf: URL(fileURLWithPath: path))) } catch let p
            as BeaconRangingConfig.Problem
        {
            Terminal.error(p.description)
            throw ExitCode(2)
        } catch {
            Terminal.error("cannot read \(path)")
            throw ExitCode(2)
        }
    }
}
