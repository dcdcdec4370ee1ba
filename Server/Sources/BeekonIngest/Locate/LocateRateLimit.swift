import Foundation

/// The per-device guard on locate requests: a token bucket refilled at one request per
/// `intervalSeconds`, holding at most `burst`. It is computed from the creation times of
/// the device's recent requests (kept in the store), so it needs no memory of its own
/// and every instance on one database applies the same limit.
package struct LocateRateLimit: Sendable, Equatable {
    /// Seconds per refilled request (60 = one a minute).
    package var intervalSeconds: Double
    /// Requests that may be made back to back.
    package var burst: Int

    /// Creates a limit.
    package init(intervalSeconds: Double = 60, burst: Int = 3) {
        self.intervalSeconds = max(0, intervalSeconds)
        self.burst = max(1, burst)
    }

    /// How far back creation times matter: older ones cannot affect the bucket.
    package var horizonMillis: Int64 { Int64(intervalSeconds * 1000) * Int64(burst) }

    /// Whether a request may be made at `nowMillis` given earlier creation times; if not,
    /// the whole seconds after which it may (the `Retry-After`).
    package func check(previous: [Int64], nowMillis: Int64) -> (allowed: Bool, retryAfterSeconds: Int) {
        guard intervalSeconds > 0 else { return (true, 0) }
        let interval = intervalSeconds * 1000
        var tokens = Double(burst)
        var last: Int64?
        // A request stamped after `nowMillis` still counts (as made now): requests take their
        // time before they take the store's lock, so a concurrent one stamped a moment later
        // may already be stored when this one is checked (issue 28: 4 of 12 got through).
        for t in previous.map({ min($0, nowMillis) }).sorted() {
            if let last { tokens = min(Double(burst), tokens + Double(t - last) / interval) }
            tokens -= 1
            last = t
        }
        if let last { tokens = min(Double(burst), tokens + Double(nowMillis - last) / interval) }
        if tokens >= 1 { return (true, 0) }
        let wait = (1 - tokens) * interval / 1000
        return (false, max(1, Int(wait.rounded(.up))))
    }
}
