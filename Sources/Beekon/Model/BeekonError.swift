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
    /// The server refused a request (4xx) and will refuse it again: `status`, the `error` code of
    /// its answer (`not_found`, `forbidden`, `invalid_invitation`, …; `http_<status>` when it sent
    /// none) and its message. A 401 means the device's credential is refused even after a refresh.
    case serverRefused(status: Int, code: String, message: String)
    /// The server was not reached, answered 5xx, or no credential is usable right now (a locked
    /// token vault, a refresh that failed for a while): retry later.
    case serverUnavailable(String)

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
        case .serverRefused(let status, let code, let message):
            return "the server refused the request (HTTP \(status) \(code)): \(message)"
        case .serverUnavailable(let why):
            return "the server is unavailable, retry later: \(why)"
        }
    }
}
