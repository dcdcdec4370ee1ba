import ArgumentParser
import Beekon
import BeekonSources
import Foundation

/// `--source` and its parameters, declared once for every command that tracks from a live or
/// replayed location source (`track`, `locate`). Beacons beside it are `BeaconOptions`.
struct SourceOptions: ParsableArguments {
    @Option(name: .long, help: "Location source: replay:PATH (GPX, TCX, NMEA, CSV, NDJSON), gpsd[://HOST:PORT] or nmea:DEVICE[?baud=N].")
    var source: String

    @Option(
        name: .long,
        help: "gpsd/nmea: seconds the source may stay unreachable before the agent gives up (exit 1; default 60, locate 10).")
    var sourceTimeout: Double?

    /// The parsed `--source`, or exit code 2 with a one-line message.
    func spec() throws -> SourceSpec {
        do { return try SourceSpec(argument: source) } catch {
            Terminal.error(error.description)
            throw ExitCode(2)
        }
    }

    /// `--source-timeout`, else `fallback`; exit code 2 unless it is a positive number.
    func grace(default fallback: Double) throws -> Double {
        let grace = sourceTimeout ?? fallback
        guard grace.isFinite, grace > 0 else {
            Terminal.error("--source-timeout must be a positive number of seconds")
            throw ExitCode(2)
        }
        return grace
    }

    /// The provider for `spec`; exit code 1 with a one-line message when it cannot start.
    func provider(
        _ spec: SourceSpec, replay: ReplayOptions.Pace, clock: ReplayClock, grace: Double, events: SourceEventLog
    ) throws -> any LocationProvider {
        do {
            return try LiveSources.provider(
                for: spec, pace: replay.speed, rebase: replay.rebase, clock: clock, grace: grace, events: events)
        } catch {
            Terminal.error("\(error)")
            throw ExitCode(1)
        }
    }
}

/// How a replayed track is played (`track`): `--speed` and `--rebase`.
struct ReplayOptions: ParsableArguments {
    @Option(name: .long, help: "Replay pace: 1 (real time), N (N× faster) or max.")
    var speed: String = "max"

    @Flag(name: .long, help: "Shift a replayed track so it starts now.")
    var rebase = false

    /// A replay's pace and whether it is shifted to start now.
    struct Pace {
        var speed: ReplaySpeed
        var rebase: Bool

        /// As fast as possible, shifted to now: a one-shot answer (`locate`).
        static let oneShot = Pace(speed: .asFastAsPossible, rebase: true)
    }

    /// The parsed options, or exit code 2 with a one-line message.
    func pace() throws -> Pace {
        guard let speed = ReplaySpeed(argument: speed) else {
            Terminal.error("--speed must be a positive number or 'max' (got '\(self.speed)')")
            throw ExitCode(2)
        }
        return Pace(speed: speed, rebase: rebase)
    }
}
