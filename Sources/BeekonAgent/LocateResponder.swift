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
    /// The clock for that pause.
    var clock: any BeekonClock = SystemClock()

    func run() async {
        while !Task.isCancelled {
            let started = clock.now()
            let ids = await beekon.pendingLocateRequests(wait: wait)
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
