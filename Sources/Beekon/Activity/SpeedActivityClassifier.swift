import Foundation

/// The platform-neutral default `ActivityClassifier` (BY-4): features of the speed
/// distribution over a sliding window of fix time, vehicle memory across stops, and
/// hysteresis so the answer does not flap. Measured on the labelled real tracks in
/// BENCHMARKS.md (`beekon activity`).
///
/// Speed per fix: the fix's own speed, else the distance from the previous fix over the
/// time between them (gaps over 30 s give no speed). Over the last `windowSeconds`:
/// - fewer than 5 speeds or under 10 s of data: `unknown`;
/// - median < 0.4 m/s and 85th percentile < 0.8 m/s: `stationary`;
/// - 85th percentile ≥ 7 m/s (25 km/h): `automotive`, and for `vehicleMemorySeconds` after
///   that any moving window stays `automotive` (a bus in traffic, between stops);
/// - median 0.5…2.2 m/s (85th < 2.8): `walking`; 2.3…4 (85th < 5): `running`;
///   4…7 (85th < 9): `cycling`; anything else `unknown`.
///
/// The answer changes only once the new candidate has held for `confirmSeconds` of fix time.
public struct SpeedActivityClassifier: ActivityClassifier, Sendable {
    /// Length of the sliding window, seconds of fix time (default 60).
    public var windowSeconds: Double = 60
    /// How long a new candidate must hold before it is reported (default 10 s).
    public var confirmSeconds: Double = 10
    /// How long vehicle speeds keep a moving window `automotive` (default 300 s).
    public var vehicleMemorySeconds: Double = 300

    private var times: [Double] = []
    private var speeds: [Double] = []
    private var head = 0
    private var previous: (t: Double, lat: Double, lon: Double)?
    private var output = Activity.unknown
    private var candidate = Activity.unknown
    private var candidateSince = -Double.infinity
    private var lastVehicle: Double?

    /// Creates a classifier with the default thresholds.
    public init() {}

    /// The activity at this fix (see the type's documentation for the rules).
    public mutating func classify(_ fix: RawFix) -> Activity {
        let t = fix.timestamp.timeIntervalSince1970
        if let p = previous, t <= p.t { return output }
        var speed = fix.speed
        if speed == nil, let p = previous, t - p.t <= 30 {
            speed = Geodesy.distance(p.lat, p.lon, fix.latitude, fix.longitude) / (t - p.t)
        }
        previous = (t, fix.latitude, fix.longitude)
        guard let speed, speed.isFinite, speed >= 0 else { return output }
        append(t, speed)
        let next = candidateFor(now: t)
        if next != candidate {
            candidate = next
            candidateSince = t
        }
        if t - candidateSince >= confirmSeconds { output = candidate }
        return output
    }

    private mutating func append(_ t: Double, _ speed: Double) {
        times.append(t)
        speeds.append(speed)
        while head < times.count, times[head] <= t - windowSeconds { head += 1 }
        if head > 256, head * 2 > times.count {
            times.removeFirst(head)
            speeds.removeFirst(head)
            head = 0
        }
    }

    private mutating func candidateFor(now t: Double) -> Activity {
        let window = speeds[head...].sorted()
        guard window.count >= 5, t - times[head] >= 10 else { return .unknown }
        let median = window[window.count / 2]
        let p85 = window[min(window.count - 1, window.count * 85 / 100)]
        if p85 >= 7 { lastVehicle = t }
        let inVehicle = lastVehicle.map { t - $0 <= vehicleMemorySeconds } ?? false
        switch (median, p85) {
        case (..<0.4, ..<0.8): return .stationary
        case (_, 7...): return .automotive
        case (0.4..., _) where inVehicle: return .automotive
        case (0.5..<2.2, ..<2.8): return .walking
        case (2.3..<4, ..<5): return .running
        case (4..<7, ..<9): return .cycling
        default: return .unknown
        }
    }
}
