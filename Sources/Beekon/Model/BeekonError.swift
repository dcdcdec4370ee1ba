/// Errors the SDK throws; each message says what happened and what to do.
public enum BeekonError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Location access was refused; ask the user to grant it, then call `start()` again.
    case permissionDenied
    /// The location source is unavailable (receiver unplugged, gpsd down, services off).
    case locationServicesDisabled(String)
    /// The on-device database could not be opened, read or written (disk full, corrupt, read-only).
    case storage(String)
    /// A configuration value is out of range or malformed; the message names the field.
    case invalidConfiguration(String)
    /// Enrolling with the server failed; the message says whether to retry later (network,
    /// server busy) or to ask for a new enrollment code (refused).
    case enrollmentFailed(String)

    public var description: String {
        switch self {
        case .permissionDenied:
            return "location permission denied: grant access, then call start() again"
        case .locationServicesDisabled(let why):
            return "location services unavailable: \(why)"
        case .storage(let why):
            return "storage error: \(why)"
        case .invalidConfiguration(let why):
            return "invalid configuration: \(why)"
        case .enrollmentFailed(let why):
            return "enrollment failed: \(why)"
        }
    }
}
