import Foundation

/// When a beacon counts as near (SPEC BY-5): `enter` after the smoothed distance stays at or
/// under ``enterDistance`` for ``dwell``; `exit` after it stays at or over the larger
/// ``exitDistance`` for ``dwell``, or after ``silenceTimeout`` with nothing heard.
public struct ProximityRule: Sendable, Equatable, Codable {
    /// Metres at or under which the beacon is near.
    public var enterDistance: Double
    /// Metres at or over which it is far again (kept above ``enterDistance``: the gap is the hysteresis).
    public var exitDistance: Double
    /// How long a condition must hold, in seconds.
    public var dwell: TimeInterval
    /// Seconds without a reception after which an entered beacon exits.
    public var silenceTimeout: TimeInterval

    /// Creates a rule (defaults: enter 1 m, exit 2 m, dwell 3 s, silence 30 s); an exit distance
    /// not above the enter distance is raised to it plus 0.5 m.
    public init(enterDistance: Double = 1, exitDistance: Double = 2, dwell: TimeInterval = 3, silenceTimeout: TimeInterval = 30) {
        self.enterDistance = enterDistance
        self.exitDistance = max(exitDistance, enterDistance + 0.5)
        self.dwell = max(0, dwell)
        self.silenceTimeout = max(0, silenceTimeout)
    }
}

/// A proximity transition.
public enum ProximityTransition: String, Sendable, Codable, Equatable {
    /// The beacon came within the enter distance (fired once per entry).
    case enter
    /// The beacon went beyond the exit distance or fell silent.
    case exit
}

/// The enter/exit state machine of one beacon in one region, over smoothed distances.
/// A value type: persist it (Codable) and the next wake continues where this one stopped.
public struct ProximityTrigger: Sendable, Equatable, Codable {
    /// The rule it applies.
    public var rule: ProximityRule
    /// Whether the beacon is currently entered.
    public private(set) var inside = false
    /// Since when the condition that would flip ``inside`` has held, if it does.
    public private(set) var pendingSince: TimeInterval?
    /// The last reception.
    public private(set) var lastHeard: TimeInterval?

    /// Creates a trigger, outside.
    public init(rule: ProximityRule) {
        self.rule = rule
    }

    /// Feeds the smoothed distance (nil: unknown, too few samples) of a reception at `time`;
    /// returns the transition it completes, if any.
    public mutating func observe(distance: Double?, at time: TimeInterval) -> ProximityTransition? {
        if let silent = tick(at: time) {
            lastHeard = time
            return silent
        }
        lastHeard = time
        guard let distance else {
            pendingSince = nil
            return nil
        }
        let flipping = inside ? distance >= rule.exitDistance : distance <= rule.enterDistance
        guard flipping else {
            pendingSince = nil
            return nil
        }
        let since = pendingSince ?? time
        pendingSince = since
        guard time - since >= rule.dwell else { return nil }
        inside.toggle()
        pendingSince = nil
        return inside ? .enter : .exit
    }

    /// Checks the silence timeout at `time`: `exit` when an entered beacon has not been heard for it.
    public mutating func tick(at time: TimeInterval) -> ProximityTransition? {
        guard let last = lastHeard, time - last >= rule.silenceTimeout else { return nil }
        pendingSince = nil
        guard inside else { return nil }
        inside = false
        return .exit
    }

    /// Counts silence from `time` on when the trigger last heard its beacon before it: time the
    /// scanner spent suspended (between two background wakes) is not silence.
    public mutating func resumeListening(at time: TimeInterval) {
        if let last = lastHeard, last < time { lastHeard = time }
    }

    /// When a silence exit falls due (nil when outside).
    public var silenceDeadline: TimeInterval? {
        guard inside, let last = lastHeard else { return nil }
        return last + rule.silenceTimeout
    }
}
