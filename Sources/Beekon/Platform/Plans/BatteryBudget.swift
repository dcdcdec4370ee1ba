import BeekonPrimitives
import Foundation

/// What the SDK asks of the OS over a replayed track (benchmark B1), from the platform-neutral
/// plans alone: a benchmark model, not the OS. Each raw fix of a recording is a position the
/// phone passes; the model decides, as the plans would have CoreLocation act, whether it wakes
/// the app:
/// - running: the ``LocationPowerPlan`` of the preset under the ``SourceTuning`` of the
///   configuration; a fix is delivered when the distance filter lets it through
///   (`CLLocationManager.h`: no notification "of movements of less than the stated value"), or
///   when none came through for the stationary dwell (the SDK then lifts the filter for one fix);
///   time counts at the plan's `desiredAccuracy`;
/// - paused by the stationary detector: nothing runs (time counts as off); a position outside
///   the ``StationaryWakePlan`` region is a region wake whose fix is delivered, one 500 m from
///   the last significant-change position a significant-change wake (Apple documents no
///   figure; 500 m is the figure the product documents use);
/// - every delivered fix goes through the SDK's stationary detector and gate (and the heartbeat);
///   a stored fix makes an upload due, one per sync interval at most (300 s by default);
///   `pauseWithCheckIns` adds one BGAppRefresh wake per check-in interval while paused.
/// Not modelled: CoreLocation's own automatic pauses (the model delivers as if they never
/// happened: more wakes, not fewer), the probe timer (a suspended app runs no timers), radio
/// wake-ups for cell or Wi-Fi positioning.
package struct BatteryBudget: Sendable, Hashable {
    /// The accuracy classes time is counted in.
    package enum AccuracyClass: String, Sendable, Hashable, CaseIterable {
        case navigation, best
        case hundredMeters = "100m"
        case threeKilometers = "3km"
        case off
    }

    /// Hours of track.
    package var hours = 0.0
    /// Fixes delivered to the app (each one a wake-up of a suspended app).
    package var delivered = 0
    /// Seconds at each accuracy class.
    package var seconds: [AccuracyClass: Double] = [:]
    /// Wakes by leaving the stationary wake region.
    package var regionWakes = 0
    /// Wakes by the significant-change monitor while paused.
    package var significantWakes = 0
    /// BGAppRefresh wakes for check-ins while paused.
    package var refreshWakes = 0
    /// Fixes stored.
    package var stored: [RawFix] = []
    /// Uploads (at most one per sync interval, when something was stored since the last).
    package var uploads = 0

    /// Fixes delivered per hour of track.
    package var deliveredPerHour: Double { hours > 0 ? Double(delivered) / hours : 0 }

    /// The naive baseline: best accuracy, every fix delivered and stored, no pause.
    package static func naive(_ fixes: [RawFix], syncIntervalSeconds: Double = 300) -> BatteryBudget {
        var budget = BatteryBudget()
        var lastUpload: Date?
        for (i, fix) in fixes.enumerated() {
            if i > 0 { budget.seconds[.best, default: 0] += fix.timestamp.timeIntervalSince(fixes[i - 1].timestamp) }
            budget.delivered += 1
            budget.stored.append(fix)
            budget.upload(at: fix.timestamp, last: &lastUpload, interval: syncIntervalSeconds)
        }
        budget.hours = Self.hours(fixes)
        return budget
    }

    /// The model for `config` (the effective configuration: a preset, or a profile applied).
    package static func replay(_ fixes: [RawFix], config: BeekonConfig, syncIntervalSeconds: Double = 300) -> BatteryBudget {
        var budget = BatteryBudget()
        var detector = StationaryDetector(
            policy: config.whenStationary, radiusMeters: config.stationaryRadiusMeters,
            checkInIntervalSeconds: config.checkInIntervalSeconds)
        var gate = Gate(minTimeSeconds: config.effectiveMinTimeSeconds, minDistanceMeters: config.effectiveMinDistanceMeters)
        let running = LocationPowerPlan(mode: config.preset.powerMode, tuning: SourceTuning(config: config))
        var wake = StationaryWakePlan()
        var lastDelivered: RawFix?
        var significantAnchor: RawFix?
        var lastStored: Date?
        var lastUpload: Date?
        var pausedSince: Date?
        for (i, fix) in fixes.enumerated() {
            let dt = i > 0 ? fix.timestamp.timeIntervalSince(fixes[i - 1].timestamp) : 0
            var deliver = false
            if detector.providerPaused {
                budget.seconds[.off, default: 0] += dt
                if let region = wake.region, !region.contains(latitude: fix.latitude, longitude: fix.longitude) {
                    budget.regionWakes += 1
                    _ = wake.exited()
                    deliver = true
                } else if let anchor = significantAnchor, distance(anchor, fix) >= 500 {
                    budget.significantWakes += 1
                    deliver = true
                }
            } else {
                budget.seconds[AccuracyClass(running.desiredAccuracy), default: 0] += dt
                let filter = running.distanceFilterMeters ?? 0
                deliver =
                    lastDelivered.map { last in
                        // The SDK lifts the filter after a dwell without a fix (`Beekon.rearmDwellCheck`).
                        distance(last, fix) >= filter || fix.timestamp.timeIntervalSince(last.timestamp) >= detector.dwellSeconds
                    } ?? true
            }
            guard deliver else { continue }
            budget.delivered += 1
            lastDelivered = fix
            significantAnchor = fix
            _ = wake.fix(latitude: fix.latitude, longitude: fix.longitude)
            var store = false
            for action in detector.observe(fix: fix) {
                switch action {
                case .pauseProvider:
                    pausedSince = fix.timestamp
                    if let anchor = detector.anchor {
                        _ = wake.paused(
                            at: SourceTuning.Stationary(
                                latitude: anchor.latitude, longitude: anchor.longitude, radiusMeters: detector.radiusMeters))
                    }
                case .resumeProvider:
                    budget.refreshWakes += checkIns(from: pausedSince, to: fix.timestamp, config: config)
                    pausedSince = nil
                    _ = wake.resumed()
                case .resumedMoving: store = true
                case .becameStationary, .checkIn: break
                }
            }
            let heartbeat =
                config.heartbeatSeconds.map { s in lastStored.map { fix.timestamp.timeIntervalSince($0) >= s } ?? true } ?? false
            let decision = gate.evaluate(fix)
            if store || heartbeat || decision == .admit || decision == .turn {
                gate.commit(fix)
                lastStored = fix.timestamp
                budget.stored.append(fix)
                budget.upload(at: fix.timestamp, last: &lastUpload, interval: syncIntervalSeconds)
            }
        }
        if let pausedSince, let end = fixes.last?.timestamp {
            budget.refreshWakes += checkIns(from: pausedSince, to: end, config: config)
        }
        budget.hours = Self.hours(fixes)
        return budget
    }

    /// The largest and 95th-percentile distance from the raw fixes to the stored polyline, metres.
    package func fidelity(against fixes: [RawFix]) -> (max: Double, p95: Double) {
        let errors = TrackDeviation.distances(
            from: fixes.map { ($0.latitude, $0.longitude) }, to: stored.map { ($0.latitude, $0.longitude) }
        ).sorted()
        guard !errors.isEmpty else { return (0, 0) }
        return (errors[errors.count - 1], errors[min(errors.count - 1, Int((Double(errors.count) * 0.95).rounded(.up)) - 1)])
    }

    private mutating func upload(at time: Date, last: inout Date?, interval: Double) {
        guard last.map({ time.timeIntervalSince($0) >= interval }) ?? true else { return }
        last = time
        uploads += 1
    }

    private static func checkIns(from start: Date?, to end: Date, config: BeekonConfig) -> Int {
        guard config.whenStationary == .pauseWithCheckIns, let start else { return 0 }
        return Int(end.timeIntervalSince(start) / max(BackgroundRefreshPlan.minimumIntervalSeconds, config.checkInIntervalSeconds))
    }

    private static func distance(_ a: RawFix, _ b: RawFix) -> Double {
        Geodesy.distance(a.latitude, a.longitude, b.latitude, b.longitude)
    }

    private static func hours(_ fixes: [RawFix]) -> Double {
        guard let first = fixes.first, let last = fixes.last else { return 0 }
        return last.timestamp.timeIntervalSince(first.timestamp) / 3600
    }
}

extension BatteryBudget.AccuracyClass {
    /// The class of a plan's accuracy.
    init(_ accuracy: LocationPowerPlan.Accuracy) {
        switch accuracy {
        case .bestForNavigation: self = .navigation
        case .best: self = .best
        case .hundredMeters: self = .hundredMeters
        case .threeKilometers: self = .threeKilometers
        }
    }
}
