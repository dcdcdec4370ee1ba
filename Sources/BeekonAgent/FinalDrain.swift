import ArgumentParser
import Beekon
import Foundation

/// The agent's last uploads before it exits, judged on `sync()`'s outcomes: exit 0 once
/// nothing is pending; `ExitCode(3)` on an auth, rejected or permanent failure, or when
/// `timeout` seconds pass with rows pending; `ExitCode(1)` when sync cannot run.
///
/// Each step starts a fresh attempt (a failure that holds uploads until the next
/// interval is tried once more) and returns only when that drain has finished, so the
/// process never exits under a drain that is still recording its outcome.
struct FinalDrain {
    let beekon: Beekon
    /// The SDK's clock (a replay clock flows at the real rate once the replay has ended).
    var clock: any BeekonClock = SystemClock()

    func run(timeout: Double) async throws {
        let deadline = clock.now().addingTimeInterval(timeout)
        while true {
            let outcome: SyncOutcome
            do { outcome = try await beekon.sync() } catch {
                let pending = (try? await beekon.pendingUploadCount()).map { "\($0)" } ?? "all"
                Terminal.error("upload failed: \(error.description); \(pending) rows kept for a later run")
                throw ExitCode(1)
            }
            switch DrainVerdict.decide(outcome, now: clock.now(), deadline: deadline, timeout: timeout) {
            case .complete:
                Terminal.out("uploads complete")
                return
            case .exit(let code, let message):
                Terminal.error(message)
                throw ExitCode(code)
            case .retry(let at):
                try? await clock.sleep(for: .milliseconds(Int64(max(0, at.timeIntervalSince(clock.now())) * 1000)))
            }
        }
    }
}
