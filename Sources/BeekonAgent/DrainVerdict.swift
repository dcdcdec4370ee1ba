import Beekon
import Foundation

/// What the agent does after one `sync()` of its final drain: a pure decision on the
/// drain's outcome, the time and the drain's deadline.
enum DrainVerdict: Equatable, Sendable {
    /// Nothing is pending: print "uploads complete", exit 0.
    case complete
    /// Exit with `code` after printing `message` (rows are kept for a later run).
    case exit(code: Int32, message: String)
    /// Sync again at this time (the engine's next attempt, or the deadline).
    case retry(at: Date)

    /// `timeout` is the drain's length in seconds, for the message.
    static func decide(_ outcome: SyncOutcome, now: Date, deadline: Date, timeout: Double) -> DrainVerdict {
        guard outcome.pending > 0 else { return .complete }
        let kept = "\(outcome.pending) rows kept for a later run"
        switch outcome.failure {
        case .held(let failure)?:
            return .exit(code: 3, message: "upload failed: \(failure); \(kept)")
        case .transient(let why)?:
            guard now < deadline, let next = outcome.nextAttempt, next < deadline else {
                return .exit(code: 3, message: "upload queue not drained within \(Int(timeout)) s (last failure: \(why)); \(kept)")
            }
            return .retry(at: max(now, next))
        case nil:
            // The drain ended early without a failure (the engine stopped) or new rows came in.
            guard now < deadline, outcome.uploadedLocations + outcome.uploadedGeofenceEvents > 0 else {
                return .exit(code: 3, message: "upload queue not drained within \(Int(timeout)) s; \(kept)")
            }
            return .retry(at: now)
        }
    }
}
