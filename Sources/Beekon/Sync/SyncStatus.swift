import BeekonWire
import Foundation

/// Why uploads are failing (SY-8).
public enum SyncFailure: Sendable, Hashable, CustomStringConvertible {
    /// 401/403, or dead refresh credentials: rows are kept; fix the credentials and call `configure`.
    case auth(status: Int?)
    /// 400/422: the batch was set aside (kept for inspection) and will not be retried.
    case rejected(status: Int)
    /// 413, 404, 3xx or another 4xx: rows are kept; retried on the next interval, `sync()` or `configure()`.
    case permanent(status: Int)

    public var description: String {
        switch self {
        case .auth(let s): return "auth" + (s.map { " (HTTP \($0))" } ?? "")
        case .rejected(let s): return "rejected (HTTP \(s))"
        case .permanent(let s): return "permanent (HTTP \(s))"
        }
    }
}

/// Upload progress and outcomes: a hot, replay-1 stream (SY-8).
public enum SyncStatus: Sendable, Hashable, CustomStringConvertible {
    /// Nothing has happened yet (or sync is off).
    case idle
    /// A drain is sending batches.
    case inFlight
    /// The last drain emptied the queue.
    case succeeded(at: Date)
    /// A transient failure; the next attempt is scheduled.
    case retrying(nextAttempt: Date)
    /// A failure that waits for the next interval, `sync()` or `configure()`.
    case failed(SyncFailure)

    public var description: String {
        switch self {
        case .idle: return "idle"
        case .inFlight: return "in flight"
        case .succeeded(let at): return "succeeded at \(WireTimestamp(at))"
        case .retrying(let next): return "retrying at \(WireTimestamp(next))"
        case .failed(let f): return "failed: \(f)"
        }
    }
}
