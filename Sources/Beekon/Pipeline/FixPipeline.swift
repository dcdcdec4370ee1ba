import Foundation

/// The per-fix steps the field report puts before the single writer (BY-4), as a value
/// type: the app state selecting the profile, activity classification, and the heartbeat
/// decision. The `Beekon` actor holds one and calls it from `receive`.
struct FixPipeline: Sendable {
    /// The configuration as the app passed it (profiles not applied).
    var base = BeekonConfig()
    /// Foreground or background: selects the profile.
    private(set) var appState = AppState.foreground
    /// Fills `activity` when `classifyActivity` is on.
    var classifier: any ActivityClassifier

    init(classifier: any ActivityClassifier) {
        self.classifier = classifier
    }

    /// The configuration in effect: the base with the current state's profile applied.
    var effective: BeekonConfig { base.resolved(for: appState) }

    /// Switches the app state; returns the new effective configuration when it changed anything.
    mutating func setAppState(_ state: AppState) -> BeekonConfig? {
        let before = effective
        appState = state
        return effective == before ? nil : effective
    }

    /// The fix with its activity filled (unless the source set one or classification is off);
    /// still sanitised (the activity is not a value the sanitiser cleans).
    mutating func classify(_ fix: SanitisedFix, config: BeekonConfig) -> SanitisedFix {
        guard config.classifyActivity, fix.activity == nil else { return fix }
        return fix.with(activity: classifier.classify(fix.fix))
    }

    /// Whether the heartbeat makes this fix due regardless of the gate: at least
    /// `heartbeatSeconds` of fix time since the last admitted fix.
    static func heartbeatDue(_ fix: RawFix, lastAdmitted: Date?, config: BeekonConfig) -> Bool {
        guard let interval = config.heartbeatSeconds, let last = lastAdmitted else { return false }
        return fix.timestamp.timeIntervalSince(last) >= interval
    }

    /// How often a paused source is woken for one fix: the probe interval, or the
    /// heartbeat when that is shorter (the OS suspends stationary updates).
    static func probeInterval(default standard: Duration, config: BeekonConfig) -> Duration {
        guard let h = config.heartbeatSeconds else { return standard }
        return min(standard, .milliseconds(Int64(h * 1000)))
    }
}
