import Foundation

/// The tracking lifecycle as a value type (LC-1..6): `mutating` methods take
/// an event and return the actions the `Beekon` actor must perform, in order.
/// No I/O happens here, so every transition is testable directly.
struct TrackingMachine: Sendable {
    /// Lifecycle phase; `session` is the running session's id.
    enum Phase: Sendable, Hashable {
        case idle
        case tracking(session: UUID)
        case stopped(StopReason)
    }

    /// Side effects for the actor to run, in order.
    enum Action: Sendable, Hashable {
        /// Persist the tracking intent and the session row (new or resumed).
        case persistIntent(session: UUID)
        /// Start the provider in this power mode.
        case startProvider(PowerMode)
        /// Change the running provider's power mode.
        case setPowerMode(PowerMode)
        /// Stop the provider.
        case stopProvider
        /// Forget the tracking intent: the next launch must not resume.
        case clearIntent
        /// Mark the session as ended with this reason.
        case closeSession(UUID, StopReason)
        /// Publish a new state on the `state` stream.
        case emitState(BeekonState)
        /// Store the fix the error-bounded admission held (its window closed: stop or new configuration).
        case store(Location)
    }

    /// What to do with one raw fix.
    enum FixDecision: Sendable, Equatable {
        /// Not tracking: the fix is dropped.
        case notTracking
        /// The gate said no.
        case rejected(GateDecision)
        /// Store this location, then call `committed(_:)`.
        case admit(Location)
    }

    private(set) var phase: Phase = .idle
    private(set) var gate: Gate
    private(set) var config: BeekonConfig
    /// Error-bounded admission (BY-9) when `maxDeviationMeters` is set; it then replaces the
    /// time, distance and turn conditions (only invalid and not-later fixes are rejected).
    private(set) var window: DeviationWindow?
    /// The phase `start` replaced, for `abortStart()`.
    private var phaseBeforeStart: Phase = .idle

    init(config: BeekonConfig) {
        self.config = config
        self.window = Self.window(for: config, anchor: nil)
        self.gate = Gate(
            minTimeSeconds: config.effectiveMinTimeSeconds, minDistanceMeters: config.effectiveMinDistanceMeters)
        gate.turnThresholdDegrees = config.turnThresholdDegrees
        gate.turnMinTimeSeconds = config.turnMinTimeSeconds
    }

    /// The public state for the current phase.
    var state: BeekonState {
        switch phase {
        case .idle: return .idle
        case .tracking: return .tracking
        case .stopped(let reason): return .stopped(reason)
        }
    }

    /// The running session, if tracking.
    var session: UUID? {
        if case .tracking(let session) = phase { return session }
        return nil
    }

    /// `start()` or a resume: enter tracking with `session`. A resumed session passes the
    /// last stored fix as `resumeFrom` so the gate continues where it stopped (a replayed
    /// prefix of a track is then rejected as not later, never stored twice).
    mutating func start(session: UUID, resumeFrom: GatePoint?) -> [Action] {
        guard self.session == nil else { return [] }
        phaseBeforeStart = phase
        phase = .tracking(session: session)
        gate.last = resumeFrom
        window?.restart(at: resumeFrom)
        return [.persistIntent(session: session), .startProvider(config.preset.powerMode), .emitState(.tracking)]
    }

    /// The start could not complete before the provider ran (e.g. storage failed):
    /// go back to the phase before `start` without emitting anything.
    mutating func abortStart() {
        phase = phaseBeforeStart
    }

    /// `stop()` by the user, a refusal, unavailable services, or termination by the system.
    /// Every stop but `.system` clears the intent: from `stopped(_)` only a new `start()`
    /// re-enters tracking, never a relaunch after the condition recovered (LC-5); a process
    /// terminated while tracking resumes (LC-6).
    mutating func stop(_ reason: StopReason) -> [Action] {
        guard let session else {
            return reason == .user ? [.clearIntent] : []
        }
        // The held fix is stored while the session still runs; then the state is published
        // first, so nobody sees "no session" while the state still says tracking.
        var actions: [Action] = window?.flush().map { [.store($0)] } ?? []
        phase = .stopped(reason)
        actions += [.emitState(.stopped(reason)), .stopProvider]
        if reason != .system { actions.append(.clearIntent) }
        actions.append(.closeSession(session, reason))
        return actions
    }

    /// The provider failed: a permission refusal stops with `permissionDenied`, an unavailable
    /// source with `locationServicesDisabled`; both clear the intent (LC-5).
    mutating func providerFailed(_ error: LocationProviderError) -> [Action] {
        switch error {
        case .permissionDenied:
            return stop(.permissionDenied)
        case .servicesDisabled, .failed:
            return stop(.locationServicesDisabled)
        }
    }

    /// New configuration: gate values apply from the next fix (LC-8); a preset
    /// change asks a running provider for its power mode.
    mutating func configure(_ new: BeekonConfig) -> [Action] {
        let oldMode = config.preset.powerMode
        var actions: [Action] = []
        if new.maxDeviationMeters != config.maxDeviationMeters
            || new.maxIntervalBetweenLocationsSeconds != config.maxIntervalBetweenLocationsSeconds
        {
            // The window closes under the tolerance its fixes were taken with (BY-9).
            let held = window?.flush()
            if let held { actions.append(.store(held)) }
            window = Self.window(for: new, anchor: held.map(DeviationWindow.point) ?? window?.anchor ?? gate.last)
        }
        config = new
        gate.minTimeSeconds = new.effectiveMinTimeSeconds
        gate.minDistanceMeters = new.effectiveMinDistanceMeters
        gate.turnThresholdDegrees = new.turnThresholdDegrees
        gate.turnMinTimeSeconds = new.turnMinTimeSeconds
        if session != nil, new.preset.powerMode != oldMode { actions.append(.setPowerMode(new.preset.powerMode)) }
        return actions
    }

    /// Flags and gates one sanitised fix. Does not change the gate: call
    /// `committed(_:)` after the location is durably stored. A fix recorded for a
    /// geofence crossing, a return to motion or a check-in bypasses the time and
    /// distance conditions (`bypassGate`) but must still be later than the last one.
    func decide(
        _ sanitised: SanitisedFix, id: UUID, motion: Motion? = nil, trigger: Trigger = .interval, bypassGate: Bool = false
    ) -> FixDecision {
        guard let session else { return .notTracking }
        let fix = sanitised.fix
        var decision = gate.evaluate(fix)
        if let window {
            let later = window.latest.map { fix.timestamp > $0 } ?? true
            decision = later ? .admit : .notLater
        } else if decision == .turn || (bypassGate && (decision == .tooSoon || decision == .tooClose)) {
            decision = .admit
        }
        guard decision == .admit else { return .rejected(decision) }
        return .admit(
            Location(
                id: id, sessionId: session, timestamp: fix.timestamp, latitude: fix.latitude,
                longitude: fix.longitude, accuracy: fix.accuracy, speed: fix.speed, bearing: fix.bearing,
                altitude: fix.altitude, trigger: trigger, motion: motion ?? (gate.last == nil ? .unknown : .moving),
                isMock: fix.isMock, activity: fix.activity, quality: FixSanitiser.quality(of: fix, after: gate.last)))
    }

    /// The admitted location is stored: it becomes the gate's reference.
    mutating func committed(_ location: Location) {
        gate.commit(
            timestamp: location.timestamp, latitude: location.latitude, longitude: location.longitude,
            bearing: location.bearing)
    }

    // MARK: - Error-bounded admission (BY-9)

    /// An admitted location (from `decide`) goes through the admission window: returns what
    /// to store now, in order — `[location]` without the mode; in the mode nothing (held),
    /// the held fix, and/or `location` itself (`force`, the window cap or liveness).
    mutating func admit(_ location: Location, force: Bool) -> [Location] {
        guard window != nil else { return [location] }
        return window!.offer(location, force: force)
    }

    /// Closes the admission window (the stationary pause): the held fix, to be stored now.
    mutating func flushHeld() -> Location? {
        window?.flush()
    }

    /// The fix the admission window holds, not stored yet (persisted so a kill keeps it).
    var held: Location? { window?.held }

    static func window(for config: BeekonConfig, anchor: GatePoint?) -> DeviationWindow? {
        config.maxDeviationMeters.map {
            DeviationWindow(toleranceMeters: $0, maxIntervalSeconds: config.maxIntervalBetweenLocationsSeconds, anchor: anchor)
        }
    }
}
