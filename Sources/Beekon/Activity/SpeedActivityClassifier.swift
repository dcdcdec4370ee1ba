import Foundation

/// The platform-neutral default `ActivityClassifier` (BY-4): the activity from the fix
/// stream alone — what Linux devices, platforms without motion hardware and Apple devices
/// with Motion & Fitness off use. Measured on labelled real recordings never used for
/// training in BENCHMARKS.md (`beekon activity --evaluate Tests/Data/labelled`).
///
/// Every ``evaluationInterval`` seconds of fix time:
/// 1. `unknown` while the short window (``ActivityFeatureWindow``: 120 s) holds fewer than
///    4 speeds or spans under 15 s;
/// 2. `stationary` when the speeds of the last 30 s have a median below 0.4 m/s and an
///    85th percentile below 0.8 m/s;
/// 3. else the logistic ``ActivityModel`` over ``ActivityFeatures`` — speed percentiles of
///    the short and the long (600 s) window, acceleration and its spread, the speed's
///    variation, heading change per distance, stop share and stop rate — gives a probability
///    per class (walking, running, cycling, automotive); the most likely class when its
///    probability is at least ``minimumConfidence``, else `unknown`.
///
/// Hysteresis: the answer changes only once the new candidate has held for
/// ``confirmSeconds`` of fix time, so one odd window does not flip it. ``confidence`` is the
/// model's probability for the answer (1 for `stationary`, 0 for `unknown`).
public struct SpeedActivityClassifier: ActivityClassifier, Sendable {
    /// How long a new candidate must hold before it is reported (default 15 s of fix time).
    public var confirmSeconds: Double = 15
    /// The least class probability that is an answer; below it the candidate is `unknown` (default 0.6).
    public var minimumConfidence: Double = 0.6
    /// How often the model is evaluated, seconds of fix time (default 5); between
    /// evaluations every fix gets the current answer.
    public var evaluationInterval: Double = 5
    /// The model's probability for the current answer.
    public private(set) var confidence = 0.0

    package var model = ActivityModel.trained
    private var window = ActivityFeatureWindow()
    private var output = Activity.unknown
    private var candidate = (activity: Activity.unknown, confidence: 0.0)
    private var candidateSince = -Double.infinity
    private var lastEvaluation: Double?

    /// Creates a classifier with the shipped model and the default settings.
    public init() {}

    /// The activity at this fix (see the type's documentation for the rules).
    public mutating func classify(_ fix: RawFix) -> Activity {
        guard window.add(fix), let t = window.latestTime else { return output }
        if let last = lastEvaluation, t - last < evaluationInterval { return output }
        lastEvaluation = t
        let next = estimate()
        if next.activity != candidate.activity {
            candidateSince = t
        }
        candidate = next
        if t - candidateSince >= confirmSeconds || output == candidate.activity {
            output = candidate.activity
            confidence = candidate.confidence
        }
        return output
    }

    /// The unconfirmed estimate from the windows now (rules 1–3), with its confidence.
    package func estimate() -> (activity: Activity, confidence: Double) {
        guard let features = window.features(), let now = window.latestTime else { return (.unknown, 0) }
        let recent = window.speeds(since: now - 30)
        if recent.count >= 2 {
            let sorted = recent.sorted()
            if ActivityFeatureWindow.percentile(sorted, 0.5) < 0.4, ActivityFeatureWindow.percentile(sorted, 0.85) < 0.8 {
                return (.stationary, 1)
            }
        }
        let p = model.probabilities(features.vector)
        guard let best = p.indices.max(by: { p[$0] < p[$1] }), p[best] >= minimumConfidence else {
            return (.unknown, 0)
        }
        return (ActivityModel.classes[best], p[best])
    }

    /// The features now (nil while the short window holds too little).
    package var features: ActivityFeatures? { window.features() }
}
