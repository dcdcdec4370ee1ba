import ArgumentParser
import Beekon
import Foundation

/// Waits for the upload queue to drain (bounded), then reports: the agent exits
/// only after its fixes are uploaded or a failure that needs a person is reported.
struct UploadWaiter {
    let beekon: Beekon

    /// Returns when nothing is pending; throws `ExitCode(3)` on auth/rejected/permanent
    /// failure or when `timeout` real seconds pass with rows still pending.
    func drain(timeout: Double) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        let (events, continuation) = AsyncStream<SyncStatus?>.makeStream()
        let watcher = Task {
            for await status in beekon.syncStatus { continuation.yield(status) }
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(max(0, timeout)))
            continuation.yield(nil)
        }
        defer { watcher.cancel(); timer.cancel() }
        for await status in events {
            let pending = (try? await beekon.pendingUploadCount()) ?? -1
            if pending == 0 {
                Terminal.out("uploads complete")
                return
            }
            switch status {
            case .failed(let failure)?:
                Terminal.error("upload failed: \(failure); \(pending) rows kept for a later run")
                throw ExitCode(3)
            case nil:
                Terminal.error("upload queue not drained within \(Int(timeout)) s; \(pending) rows kept for a later run")
                throw ExitCode(3)
            default:
                if Date() >= deadline { continuation.yield(nil) }
            }
        }
    }
}
