import Beekon
import Foundation
import Logging

/// The agent's side of the locate command channel (BY-2): long-polls the server for
/// requests addressed to this device and answers each through the SDK. Runs while
/// `beekon track` runs with sync configured.
struct LocateResponder: Sendable {
    let beekon: Beekon
    let logger: Logger
    /// How long one poll may wait on the server.
    var wait: Duration = .seconds(25)
    /// Pause after a failed poll (no answer at all), so a dead server is not hammered.
    var pauseAfterFailure: Duration = .seconds(2)
    /// Pause after the server said it has no command channel (404/405/501): a backend
    /// that only implements uploads is asked again this rarely.
    var pauseWhenUnsupported: Duration = .seconds(600)
    /// The clock for that pause.
    var clock: any BeekonClock = SystemClock()

    func run() async {
        while !Task.isCancelled {
            let started = clock.now()
            let poll = await beekon.pendingLocateRequests(wait: wait)
            if case .unsupported(let status) = poll {
                logger.notice(
                    "the server has no locate command channel; asking again later",
                    metadata: ["status": "\(status)", "retry_seconds": "\(pauseWhenUnsupported.components.seconds)"])
                try? await clock.sleep(for: pauseWhenUnsupported)
                continue
            }
            let ids = poll.ids
            for id in ids {
                let answer = await beekon.handleLocateRequest(id: id)
                switch answer {
                case .answered(let location):
                    Terminal.out("answered locate request \(id.wireString) with fix \(location.id.wireString)")
                case .refused(let reason):
                    Terminal.out("refused locate request \(id.wireString): \(reason)")
                }
            }
            // An empty answer much sooner than the wait means the poll failed.
            if ids.isEmpty, clock.now().timeIntervalSince(started) < 1 {
                try? await clock.sleep(for: pauseAfterFailure)
            }
        }
    }
}
