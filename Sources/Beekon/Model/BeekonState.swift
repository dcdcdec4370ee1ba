/// Why tracking stopped (LC-2).
public enum StopReason: String, Sendable, Hashable, Codable {
    /// The application called `stop()`.
    case user
    /// Location access was refused.
    case permissionDenied
    /// The location source became unavailable for good (on Linux: gpsd or the device is gone).
    case locationServicesDisabled
    /// The OS or the service manager told the process to terminate; tracking resumes on the next launch.
    case system
}

/// The SDK's lifecycle state (LC-1): exactly three cases, no starting or paused state.
public enum BeekonState: Sendable, Hashable, CustomStringConvertible {
    /// Never started in this process, or not tracking after launch.
    case idle
    /// Receiving, gating and storing fixes.
    case tracking
    /// Tracking ended; only a new `start()` re-enters `tracking` (LC-5).
    case stopped(StopReason)

    public var description: String {
        switch self {
        case .idle: return "idle"
        case .tracking: return "tracking"
        case .stopped(let reason): return "stopped(\(reason.rawValue))"
        }
    }
}
