import Foundation

/// The clock side of stationary handling (FX-6) as a value type: the detector, whether a
/// paused source is being woken for one probe fix, and the check-in the timer is armed for.
/// Its methods return what the `Beekon` actor must do with the source and its two timers;
/// the actor owns the tasks, this type decides when they run.
struct StationaryTiming: Sendable {
    /// What the actor does with the source and the probe and check-in timers, in order.
    enum Action: Sendable, Equatable {
        /// Put the source back to sleep (the probe's fix found the device still inside the radius).
        case pauseSource
        /// (Re)start the probe timer: `probeInterval` of clock time, then `probeDue`.
        case armProbe
        /// Cancel the probe timer.
        case cancelProbe
        /// Cancel any check-in timer and arm one for this time.
        case armCheckIn(Date)
        /// Cancel the check-in timer.
        case cancelCheckIn
    }

    /// How often a paused source is woken for one fix while stationary (clock time). A
    /// paused source may deliver nothing at all (gpsd with its watch off); sources that
    /// keep delivering while paused (replay) never reach the probe.
    static let probeInterval: Duration = .seconds(60)

    /// The stationary detector (motion, pause, cached fix, check-in schedule).
    var detector = StationaryDetector()
    /// Whether the paused source was woken for one probe fix that has not arrived yet.
    private(set) var probing = false
    /// The check-in the timer is armed for, nil when none is.
    private(set) var armedCheckIn: Date?

    /// After the detector ran (a fix, a new configuration): the probe timer while the source
    /// is paused, and the source put back to sleep when a probe's fix found it still inside.
    mutating func settleProbe(tracking: Bool) -> [Action] {
        var actions: [Action] = []
        if detector.providerPaused {
            if probing {
                // The probe's fix arrived and the device is still inside the radius: sleep again.
                probing = false
                if tracking { actions.append(.pauseSource) }
            }
            actions.append(.armProbe)
        } else {
            probing = false
            actions.append(.cancelProbe)
        }
        return actions
    }

    /// The check-in timer for the detector's next due time (none while not tracking);
    /// nothing when it is already armed for that time.
    mutating func rearmCheckIn(tracking: Bool) -> [Action] {
        let due = tracking ? detector.nextCheckInDue : nil
        guard due != armedCheckIn else { return [] }
        armedCheckIn = due
        return [due.map(Action.armCheckIn) ?? .cancelCheckIn]
    }

    /// The probe timer fired: whether to wake the paused source for one fix.
    mutating func probeDue(tracking: Bool) -> Bool {
        guard tracking, detector.providerPaused, !probing else { return false }
        probing = true
        return true
    }

    /// The check-in timer fired: it is no longer armed.
    mutating func checkInFired() {
        armedCheckIn = nil
    }

    /// The source stopped: both timers go.
    mutating func sourceStopped() -> [Action] {
        probing = false
        armedCheckIn = nil
        return [.cancelCheckIn, .cancelProbe]
    }
}
