import ArgumentParser
import Beekon
import Foundation

/// Waits for the upload queue to drain (bounded), then reports: the agent exits
/// only after its fixes are uploaded or a failure that needs a person is reported.
struct UploadWaiter {
    let beekon: Beekon

    private enum Event {
        case status(SyncStatus)
        /// The fresh attempt `drain` started has finished (or could not start).
        case attempted(BeekonError?)
        case deadline
    }

    /// Waits for `task` to finish, or until `deadline` (real time).
    private static func wait(for task: Task<Void, Never>, until deadline: Date) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await task.value }
            group.addTask { try? await Task.sleep(for: .seconds(max(0, deadline.timeIntervalSinceNow))) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Starts a fresh upload attempt, then returns when nothing is pending; throws
    /// `ExitCode(3)` when that attempt (or a retry after it) ends in an auth, rejected or
    /// permanent failure, or when `timeout` real seconds pass with rows still pending;
    /// `ExitCode(1)` when the attempt cannot start.
    ///
    /// The attempt is what the exit is judged on. The status stream replays the latest
    /// outcome, which may be a failure from minutes ago that holds uploads until the next
    /// interval (a 401 to the retry after a token refresh, a 413): judged on that, the agent
    /// would exit with rows pending without trying once more.
    func drain(timeout: Double) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        let (events, continuation) = AsyncStream<Event>.makeStream()
        let watcher = Task {
            for await status in beekon.syncStatus { continuation.yield(.status(status)) }
        }
        let attempt = Task {
            do throws(BeekonError) {
                try await beekon.sync()
                continuation.yield(.attempted(nil))
            } catch {
                continuation.yield(.attempted(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: .seconds(max(0, timeout)))
            continuation.yield(.deadline)
        }
        defer { watcher.cancel(); attempt.cancel(); timer.cancel() }
        var attempted = false
        for await event in events {
            let pending = (try? await beekon.pendingUploadCount()) ?? -1
            if pending == 0 {
                // The drain that emptied the queue may still be winding down (its `sync()` has
                // not returned): let it finish before the process exits, or exit() would tear
                // down the runtime under it (seen as a SIGSEGV after "uploads complete").
                await Self.wait(for: attempt, until: deadline.addingTimeInterval(5))
                Terminal.out("uploads complete")
                return
            }
            var failure: SyncFailure?
            switch event {
            case .attempted(let error?):
                Terminal.error("upload failed: \(error.description); \(pending) rows kept for a later run")
                throw ExitCode(1)
            case .attempted(nil):
                attempted = true
                if case .failed(let f) = beekon.currentSyncStatus { failure = f }
            case .status(.failed(let f)) where attempted:
                failure = f
            case .status:
                break  // progress; the timer reports the deadline
            case .deadline:
                Terminal.error("upload queue not drained within \(Int(timeout)) s; \(pending) rows kept for a later run")
                throw ExitCode(3)
            }
            if let failure {
                Terminal.error("upload failed: \(failure); \(pending) rows kept for a later run")
                throw ExitCode(3)
            }
        }
    }
}
