import Foundation

/// The position and time of the last admitted fix, all the gate remembers.
struct GatePoint: Sendable, Hashable, Codable {
    var timestamp: Date
    var latitude: Double
    var longitude: Double
}

/// What the gate decided about one fix.
enum GateDecision: Sendable, Equatable {
    /// Admit: the first fix, or both conditions hold.
    case admit
    /// The timestamp is not later than the last admitted fix (FX-2); counted, not stored.
    case notLater
    /// Less than the minimum time since the last admitted fix.
    case tooSoon
    /// Closer than the minimum distance to the last admitted fix.
    case tooClose
}

/// FX-2: admits a fix when BOTH the minimum time (between fix timestamps, never
/// the wall clock) AND the minimum distance from the last admitted fix hold.
/// The first fix after `start()` always passes. Pure value type.
struct Gate: Sendable, Hashable {
    var minTimeSeconds: Double
    var minDistanceMeters: Double
    /// The last admitted fix; nil right after `start()`.
    var last: GatePoint?

    init(minTimeSeconds: Double, minDistanceMeters: Double, last: GatePoint? = nil) {
        self.minTimeSeconds = minTimeSeconds
        self.minDistanceMeters = minDistanceMeters
        self.last = last
    }

    /// Decides without changing state; call `commit` once the fix is durably stored.
    func evaluate(_ fix: RawFix) -> GateDecision {
        guard let last else { return .admit }
        let dt = fix.timestamp.timeIntervalSince(last.timestamp)
        if dt <= 0 { return .notLater }
        if minTimeSeconds > 0, dt < minTimeSeconds { return .tooSoon }
        if minDistanceMeters > 0,
           Geodesy.distance(last.latitude, last.longitude, fix.latitude, fix.longitude) < minDistanceMeters {
            return .tooClose
        }
        return .admit
    }

    /// Records `fix` as the last admitted one.
    mutating func commit(_ fix: RawFix) {
        last = GatePoint(timestamp: fix.timestamp, latitude: fix.latitude, longitude: fix.longitude)
    }
}
