import Beekon
import BeekonSources
import Foundation

/// Builds the location provider for a `--source`.
enum LiveSources {
    struct Problem: Error, CustomStringConvertible { var description: String }

    /// The provider for `spec`; `grace` is the live sources' unreachable grace period in seconds.
    static func provider(
        for spec: SourceSpec, pace: ReplaySpeed, rebase: Bool, clock: ReplayClock,
        grace: Double, events: SourceEventLog
    ) throws(Problem) -> any LocationProvider {
        let policy = ReconnectPolicy(
            gracePeriod: .milliseconds(Int64((grace * 1000).rounded())),
            maxBackoff: .seconds(min(5, max(0.25, grace / 4))))
        switch spec {
        case .replay(let path):
            do {
                return try ReplayProvider(
                    contentsOf: URL(fileURLWithPath: path), speed: pace, clock: clock,
                    rebaseToNow: rebase)
            } catch {
                throw Problem(description: error.description)
            }
        case .gpsd(let host, let port):
            return GPSDProvider(
                configuration: .init(host: host, port: port, policy: policy), onEvent: events.handler, clock: clock.realClock)
        case .nmea(let path, let baud):
            do {
                return try NMEASerialProvider(
                    configuration: .init(path: path, baud: baud, policy: policy),
                    onEvent: events.handler, clock: clock.realClock)
            } catch {
                throw Problem(description: error.description)
            }
        }
    }
}
