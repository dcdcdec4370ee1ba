import BeekonWire
import Foundation

/// What one `sync()` drain did (SY-3, SY-8): what went out, what is still waiting, why
/// the drain stopped early and when the engine tries again by itself.
public struct SyncOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Why a drain stopped before the queue was empty.
    public enum Failure: Sendable, Hashable, CustomStringConvertible {
        /// Timeout, network error, 408/429/5xx, no usable token yet, a local write that
        /// failed: retried by the engine at `nextAttempt`.
        case transient(String)
        /// Auth, a rejected batch or another permanent answer: waits for the next interval,
        /// `sync()` or `configure()` (SY-7, AU-5).
        case held(SyncFailure)

        public var description: String {
            switch self {
            case .transient(let why): return why
            case .held(let failure): return "\(failure)"
            }
        }
    }

    /// Fixes the server accepted during this drain.
    public var uploadedLocations: Int
    /// Geofence events the server accepted during this drain.
    public var uploadedGeofenceEvents: Int
    /// Fixes and geofence events still waiting for upload afterwards.
    public var pending: Int
    /// Why the drain stopped early; nil when it emptied the queue (or was not allowed to run).
    public var failure: Failure?
    /// When the engine retries by itself after a transient failure; nil otherwise.
    public var nextAttempt: Date?

    /// Creates an outcome.
    public init(
        uploadedLocations: Int = 0, uploadedGeofenceEvents: Int = 0, pending: Int = 0,
        failure: Failure? = nil, nextAttempt: Date? = nil
    ) {
        self.uploadedLocations = uploadedLocations
        self.uploadedGeofenceEvents = uploadedGeofenceEvents
        self.pending = pending
        self.failure = failure
        self.nextAttempt = nextAttempt
    }

    public var description: String {
        var text = "uploaded \(uploadedLocations) fixes, \(uploadedGeofenceEvents) events; \(pending) pending"
        if let failure { text += "; failed: \(failure)" }
        if let nextAttempt { text += "; next attempt at \(WireTimestamp(nextAttempt))" }
        return text
    }
}
