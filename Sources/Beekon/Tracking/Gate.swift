import BeekonPrimitives
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
    /// Admitted early by the opt-in turn rule (the heading changed enough).
    case turn
}

/// FX-2: admits a fix when BOTH the minimum time (between fix timestamps, never
/// the wall clock) AND the minimum distance from the last admitted fix hold.
/// The first fix after `start()` always passes. Pure value type.
struct Gate: Sendable, Hashable {
    var minTimeSeconds: Double
    var minDistanceMeters: Double
    /// Opt-in turn-aware admission: admit early when the heading differs from the heading
    /// at the last admitted fix by more than this many degrees (nil: off, the SPEC gate).
    var turnThresholdDegrees: Double?
    /// The minimum time between fixes the turn rule still respects.
    var turnMinTimeSeconds: Double = 5
    /// The last admitted fix; nil right after `start()`.
    var last: GatePoint?
    /// Heading at the last admitted fix: its reported bearing, else the course into it.
    var lastCourse: Double?

    /// Below this distance a chord's bearing is noise, so the turn rule does not apply.
    static let turnMinDistanceMeters = 10.0

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
        let distance = Geodesy.distance(last.latitude, last.longitude, fix.latitude, fix.longitude)
        let decision: GateDecision
        if minTimeSeconds > 0, dt < minTimeSeconds {
            decision = .tooSoon
        } else if minDistanceMeters > 0, distance < minDistanceMeters {
            decision = .tooClose
        } else {
            return .admit
        }
        if let threshold = turnThresholdDegrees, let lastCourse, dt >= turnMinTimeSeconds,
            distance >= Self.turnMinDistanceMeters
        {
            let course = fix.bearing ?? Geodesy.bearing(last.latitude, last.longitude, fix.latitude, fix.longitude)
            if Geodesy.angleBetween(course, lastCourse) > threshold { return .turn }
        }
        return decision
    }

    /// Records `fix` as the last admitted one.
    mutating func commit(_ fix: RawFix) {
        commit(timestamp: fix.timestamp, latitude: fix.latitude, longitude: fix.longitude, bearing: fix.bearing)
    }

    /// Records an admitted position as the gate's reference.
    mutating func commit(timestamp: Date, latitude: Double, longitude: Double, bearing: Double?) {
        if let bearing {
            lastCourse = bearing
        } else if let last, Geodesy.distance(last.latitude, last.longitude, latitude, longitude) >= Self.turnMinDistanceMeters {
            lastCourse = Geodesy.bearing(last.latitude, last.longitude, latitude, longitude)
        }
        last = GatePoint(timestamp: timestamp, latitude: latitude, longitude: longitude)
    }
}
