/// Connection events of a live source, for logs and status lines (the
/// providers never print; the agent logs these).
public enum LiveSourceEvent: Sendable, Hashable, CustomStringConvertible {
    /// Connected to / opened the source (`what` names it, e.g. `gpsd at 127.0.0.1:2947`).
    case connected(String)
    /// The connection ended; the source retries.
    case disconnected(String, reason: String)
    /// An attempt failed; the next one follows after `retryIn` seconds.
    case attemptFailed(String, error: String, retryIn: Double)
    /// Unreachable for the whole grace period: the stream throws.
    case gaveUp(String, reason: String)
    /// The source ended normally (a regular file read to its end).
    case ended(String)

    public var description: String {
        switch self {
        case .connected(let w): return "connected to \(w)"
        case .disconnected(let w, let r): return "lost \(w): \(r); reconnecting"
        case .attemptFailed(let w, let e, let s):
            return "cannot reach \(w): \(e); retrying in \(String(format: "%.2f", s)) s"
        case .gaveUp(let w, let r): return "giving up on \(w): \(r)"
        case .ended(let w): return "\(w) ended"
        }
    }
}
