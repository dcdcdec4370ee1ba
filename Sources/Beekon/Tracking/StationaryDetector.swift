import BeekonPrimitives
import Foundation

/// FX-6 as a value type: decides from fix timestamps (and an injected `now` for
/// check-ins) when the device is stationary, and returns the actions the
/// `Beekon` actor must run. Never reads the wall clock.
///
/// ## Rules
///
/// - **Anchor.** The first fix becomes the anchor. A fix is *inside* the
///   stationary radius when `distance(anchor, fix) − min(accuracy, radius) ≤ radius`
///   (a missing accuracy counts as 0): a noisy fix gets at most one extra radius of
///   tolerance. A fix outside moves the anchor to itself.
/// - **Dwell.** When an inside fix is at least ``dwellSeconds`` (default
///   ``defaultDwellSeconds`` = 120 s) of fix time after the anchor, motion becomes
///   `stationary`: `.becameStationary`, and under `pause`/`pauseWithCheckIns`
///   `.pauseProvider` (ask the source for `PowerMode.paused`).
/// - **Departure.** While stationary, the first fix outside the radius makes motion
///   `moving`: `.resumeProvider` (if the source was paused; restore the configured
///   preset's power mode), then `.resumedMoving(fix)` (record it with trigger
///   `motion`, bypassing the gate) under every policy.
/// - **Check-ins.** Under `pauseWithCheckIns`, while stationary, ``tick(now:)``
///   returns `.checkIn(fix)` once `now` reaches ``nextCheckInDue`` — first
///   ``checkInIntervalSeconds`` (default ``defaultCheckInIntervalSeconds`` = 900 s)
///   after the fix that completed the dwell, then every interval. A late tick yields
///   one check-in, not a burst; the schedule skips the missed slots.
/// - **Motion.** `unknown` until the first fix outside the anchor's radius
///   (→ `moving`) or the dwell completes (→ `stationary`).
/// - Fixes not later than the last observed one are ignored.
struct StationaryDetector: Sendable {
    /// `stationaryRadiusMeters` when not configured.
    static let defaultRadiusMeters = BeekonConfig.defaults.stationaryRadiusMeters
    /// `stationaryRadiusMeters` is clamped into this range.
    static let radiusRange: ClosedRange<Double> = 5...1000
    /// Fix time inside the radius before motion becomes `stationary`.
    static let defaultDwellSeconds = 120.0
    /// `checkInIntervalSeconds` when not configured (15 minutes).
    static let defaultCheckInIntervalSeconds = BeekonConfig.defaults.checkInIntervalSeconds
    /// Shorter check-in intervals are raised to this.
    static let minimumCheckInIntervalSeconds = 1.0

    /// Side effects for the actor to run, in order.
    enum Action: Sendable, Hashable {
        /// Motion became `stationary` with this fix (which is itself marked `stationary`).
        case becameStationary(RawFix)
        /// Ask the provider for `PowerMode.paused`.
        case pauseProvider
        /// Give the provider back the configured preset's power mode.
        case resumeProvider
        /// The device left the radius: record this fix with trigger `motion` and motion `moving`.
        case resumedMoving(RawFix)
        /// Record this fix with trigger `check_in` and motion `stationary`: the cached last
        /// position with the tick's timestamp (speed and bearing dropped: they were measured
        /// at the cached time and no longer describe the device).
        case checkIn(RawFix)
    }

    /// What to do when stationary.
    private(set) var policy: StationaryPolicy
    /// The stationary radius in metres, clamped to ``radiusRange``.
    private(set) var radiusMeters: Double
    /// Fix time inside the radius before motion becomes `stationary`.
    let dwellSeconds: Double
    /// Seconds between check-ins under `pauseWithCheckIns`.
    private(set) var checkInIntervalSeconds: Double

    /// The current motion state: use it for the `motion` field of every fix.
    private(set) var motion: Motion = .unknown
    /// The last observed fix: the position check-ins are built from.
    private(set) var lastFix: RawFix?
    /// The fix the radius is measured from.
    private(set) var anchor: RawFix?
    /// When the next check-in is due (only while stationary under `pauseWithCheckIns`):
    /// schedule a timer for it and call ``tick(now:)``.
    private(set) var nextCheckInDue: Date?
    /// Whether the detector asked for `.paused` and has not resumed the provider yet.
    private(set) var providerPaused = false
    private var lastCheckIn: Date?
    private var stationarySince: Date?

    /// Creates a detector; the radius is clamped to 5…1000 m, non-finite values use the defaults.
    init(
        policy: StationaryPolicy = .pause, radiusMeters: Double = Self.defaultRadiusMeters,
        dwellSeconds: Double = Self.defaultDwellSeconds,
        checkInIntervalSeconds: Double = Self.defaultCheckInIntervalSeconds
    ) {
        self.policy = policy
        self.radiusMeters = Self.clampedRadius(radiusMeters)
        self.dwellSeconds = dwellSeconds.isFinite && dwellSeconds >= 0 ? dwellSeconds : Self.defaultDwellSeconds
        self.checkInIntervalSeconds = Self.clampedInterval(checkInIntervalSeconds)
    }

    /// `stationaryRadiusMeters` as applied: clamped into 5…1000; non-finite → the default.
    static func clampedRadius(_ meters: Double) -> Double {
        meters.isFinite ? min(radiusRange.upperBound, max(radiusRange.lowerBound, meters)) : defaultRadiusMeters
    }

    /// `checkInIntervalSeconds` as applied: at least 1 s; non-finite → the default.
    static func clampedInterval(_ seconds: Double) -> Double {
        seconds.isFinite ? max(minimumCheckInIntervalSeconds, seconds) : defaultCheckInIntervalSeconds
    }

    /// Whether `fix` is within the stationary radius of `anchor` (see the type's rules).
    func isInside(_ fix: RawFix, anchor: RawFix) -> Bool {
        let d = Geodesy.distance(anchor.latitude, anchor.longitude, fix.latitude, fix.longitude)
        let tolerance = min(fix.accuracy.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? 0, radiusMeters)
        return d - tolerance <= radiusMeters
    }

    /// Feeds one sanitised fix (before the gate); returns the actions to run, in order.
    /// Afterwards ``motion`` is the motion of this fix.
    mutating func observe(fix: RawFix) -> [Action] {
        if let lastFix, fix.timestamp <= lastFix.timestamp { return [] }
        lastFix = fix
        guard let anchor else {
            anchor = fix
            return []
        }
        let inside = isInside(fix, anchor: anchor)
        if motion == .stationary {
            guard !inside else { return [] }
            motion = .moving
            self.anchor = fix
            stationarySince = nil
            nextCheckInDue = nil
            lastCheckIn = nil
            var actions: [Action] = []
            if providerPaused {
                providerPaused = false
                actions.append(.resumeProvider)
            }
            actions.append(.resumedMoving(fix))
            return actions
        }
        guard inside else {
            motion = .moving
            self.anchor = fix
            return []
        }
        guard fix.timestamp.timeIntervalSince(anchor.timestamp) >= dwellSeconds else { return [] }
        motion = .stationary
        stationarySince = fix.timestamp
        return [.becameStationary(fix)] + applyPolicy()
    }

    /// Called by the check-in timer with the injected clock's `now`: under
    /// `pauseWithCheckIns`, while stationary and when a check-in is due, returns
    /// `.checkIn` with the cached position stamped `now`.
    mutating func tick(now: Date) -> [Action] {
        guard motion == .stationary, policy == .pauseWithCheckIns,
            let due = nextCheckInDue, now >= due, let cached = lastFix
        else { return [] }
        var fix = cached
        fix.timestamp = now
        fix.speed = nil
        fix.bearing = nil
        lastCheckIn = now
        let missed = (now.timeIntervalSince(due) / checkInIntervalSeconds).rounded(.down)
        nextCheckInDue = due.addingTimeInterval((missed + 1) * checkInIntervalSeconds)
        return [.checkIn(fix)]
    }

    /// New settings (`configure(_:)`): the radius applies from the next fix; a policy
    /// change while stationary pauses or resumes the provider at once.
    mutating func reconfigure(
        policy: StationaryPolicy, radiusMeters: Double, checkInIntervalSeconds: Double
    ) -> [Action] {
        self.radiusMeters = Self.clampedRadius(radiusMeters)
        let interval = Self.clampedInterval(checkInIntervalSeconds)
        let intervalChanged = interval != self.checkInIntervalSeconds
        self.checkInIntervalSeconds = interval
        let policyChanged = policy != self.policy
        self.policy = policy
        guard motion == .stationary else { return [] }
        if intervalChanged, !policyChanged, policy == .pauseWithCheckIns, let since = lastCheckIn ?? stationarySince {
            nextCheckInDue = since.addingTimeInterval(interval)
        }
        return policyChanged ? applyPolicy() : []
    }

    /// A new tracking run: forget the anchor, the cache and the motion state.
    /// The provider starts in its configured mode, so no action is needed.
    mutating func reset() {
        self = StationaryDetector(
            policy: policy, radiusMeters: radiusMeters, dwellSeconds: dwellSeconds,
            checkInIntervalSeconds: checkInIntervalSeconds)
    }

    /// Brings the provider and the check-in schedule in line with `policy` while stationary.
    private mutating func applyPolicy() -> [Action] {
        var actions: [Action] = []
        let wantsPause = policy != .keepTracking
        if wantsPause, !providerPaused {
            providerPaused = true
            actions.append(.pauseProvider)
        }
        if !wantsPause, providerPaused {
            providerPaused = false
            actions.append(.resumeProvider)
        }
        if policy == .pauseWithCheckIns {
            if nextCheckInDue == nil, let since = lastCheckIn ?? stationarySince {
                nextCheckInDue = since.addingTimeInterval(checkInIntervalSeconds)
            }
        } else {
            nextCheckInDue = nil
        }
        return actions
    }
}
