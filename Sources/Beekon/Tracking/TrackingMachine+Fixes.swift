import Foundation

/// Every way a fix reaches the store, as an event for the one decider
/// (`TrackingMachine.decide(_:)`).
enum FixEvent: Sendable, Equatable {
    /// A fix from the running source (ST-1): gated (a crossing, a return to motion or the
    /// heartbeat bypass the time and distance conditions), then through the admission window.
    /// `crossing` goes into the same transaction as the fix, or alone when the fix is not stored.
    case tracked(SanitisedFix, id: UUID, motion: Motion, trigger: Trigger, bypassGate: Bool, crossing: FixCrossing)
    /// A check-in that fell due while stationary (FX-6, BY-4): bypasses the gate, stored now
    /// (after the held fix) and uploaded at once.
    case checkIn(SanitisedFix, id: UUID)
    /// The fresh fix answering a locate request (BY-2): stored whatever the gate says, after
    /// the held fix, into the running session (or `idleSession` when not tracking).
    case locateAnswer(SanitisedFix, id: UUID, requestID: UUID, motion: Motion, idleSession: UUID)
    /// The admission window closed for a reason outside it (stop, new tolerance, stationary
    /// pause): the fix it held.
    case windowClosed(Location?)
    /// At `start()` or a resume: the fix held when the process died, and the latest fix
    /// already stored in its session (stored only when later: it may have been stored
    /// before the marker was cleared).
    case restoredHeld(Location, lastStored: Date?)
}

/// A geofence crossing evaluated on a tracked fix: the events and the inside/outside states
/// to store, and what `geofenceEvents` publishes once they are.
struct FixCrossing: Sendable, Equatable {
    /// The events as stored.
    var records: [GeofenceEventRecord] = []
    /// The fences whose inside/outside state changed.
    var states: [String: Bool] = [:]
    /// The events as published.
    var events: [GeofenceEvent] = []

    /// No crossing.
    static let none = FixCrossing()
}

/// One effect of a fix decision; the actor's one interpreter (`Beekon.apply(_:)`) runs a
/// list of them in order. Nothing else writes a fix to the store.
enum FixEffect: Sendable, Equatable {
    /// Store the location durably (the crossing in the same transaction); `then` runs only
    /// once it is stored.
    case store(Location, crossing: FixCrossing?, then: [FixEffect])
    /// Store a crossing whose fix is not stored (the crossing still counts).
    case storeCrossing(FixCrossing)
    /// The gate's reference becomes this stored fix; the heartbeat restarts.
    case commit(Location)
    /// Emit the stored fix on `positions` (FX-7).
    case publish(Location)
    /// Tell the upload a fix was stored (its batch-size threshold, SY-3).
    case notifySync
    /// Wake the upload at once (SY-3: check-ins, BY-4).
    case wakeSync(SyncTrigger)
    /// Run the age prune when it is due.
    case prune
    /// Persist the admission window's held fix so a kill loses none (nil clears the marker).
    case persistHeld(Location?)
    /// Count a fix the gate rejected (statistics, BY-6).
    case rejected(GateDecision)
    /// Set the provider's power mode (FX-6: `paused` while stationary, else the preset's).
    case setPowerMode(PowerMode)
    /// The motion state changed: log it and persist it on the session (FX-6).
    case setMotion(Motion)
    /// (Re)start the stationary probe timer; when it fires, the paused source is woken for one fix.
    case armProbe
    /// Cancel the probe timer.
    case cancelProbe
    /// Cancel any check-in timer and arm one for this time (`pauseWithCheckIns`).
    case armCheckIn(Date)
    /// Cancel the check-in timer.
    case cancelCheckIn
    /// Count a fix the sanitiser refused (statistics, BY-6).
    case invalid
    /// The heartbeat made this fix due past the gate (BY-4): logged.
    case heartbeat(intervalSeconds: Double)
    /// After a fix of the running source: lift or re-arm the distance filter's dwell check (FX-6).
    case rearmDwellCheck
}

/// The stationary vocabularies (FX-6) in the fix decider's one list of effects: the
/// detector's provider actions and the timers' actions become `FixEffect`s, run by the same
/// interpreter (`Beekon.apply(_:)`).
extension TrackingMachine {
    /// The detector's actions as effects. `pauseProvider` first closes the admission window
    /// (its held fix is stored before the source sleeps), then pauses the source while
    /// tracking; `resumeProvider` gives it the preset's power mode back. The fix-marking
    /// actions (`becameStationary`, `resumedMoving`: the detector already marked the fix's
    /// motion) and `checkIn` (recorded when its timer fires, `FixEvent.checkIn`) have no effect.
    mutating func decide(_ actions: [StationaryDetector.Action]) -> [FixEffect] {
        var effects: [FixEffect] = []
        for action in actions {
            switch action {
            case .pauseProvider:
                effects += decide(.windowClosed(flushHeld()))
                if session != nil { effects.append(.setPowerMode(.paused)) }
            case .resumeProvider:
                if session != nil { effects.append(.setPowerMode(config.preset.powerMode)) }
            case .becameStationary, .resumedMoving, .checkIn:
                break
            }
        }
        return effects
    }

    /// The stationary timers' actions as effects (`pauseSource`: the probe's fix found the
    /// device still inside the radius, so the source sleeps again).
    static func effects(of timing: [StationaryTiming.Action]) -> [FixEffect] {
        timing.map { action in
            switch action {
            case .pauseSource: .setPowerMode(.paused)
            case .armProbe: .armProbe
            case .cancelProbe: .cancelProbe
            case .armCheckIn(let due): .armCheckIn(due)
            case .cancelCheckIn: .cancelCheckIn
            }
        }
    }
}

extension TrackingMachine {
    /// The one decision for every fix (tracked, check-in, locate answer, the window's held
    /// fix, the held fix restored after a kill): the effects to run, in order. Pure: the gate
    /// and the admission window change here; storage, streams and timers are the effects'.
    mutating func decide(_ event: FixEvent) -> [FixEffect] {
        switch event {
        case .tracked(let fix, let id, let motion, let trigger, let bypassGate, let crossing):
            switch decide(fix, id: id, motion: motion, trigger: trigger, bypassGate: bypassGate) {
            case .notTracking:
                return []
            case .rejected(let why):
                var effects: [FixEffect] = [.rejected(why)]
                if !crossing.states.isEmpty { effects.append(.storeCrossing(crossing)) }
                return effects
            case .admit(let location):
                return admitted(location, force: bypassGate, crossing: crossing)
            }
        case .checkIn(let fix, let id):
            guard case .admit(let location) = decide(fix, id: id, motion: .stationary, trigger: .checkIn, bypassGate: true)
            else { return [] }
            // Uploaded at once: a check-in refreshes the device's last contact on the server (BY-4).
            return admitted(location, force: true, crossing: nil, after: [.wakeSync(.checkIn)])
        case .locateAnswer(let fix, let id, let requestID, let motion, let idleSession):
            var location = Location(
                id: id, sessionId: session ?? idleSession, timestamp: fix.timestamp, latitude: fix.latitude,
                longitude: fix.longitude, accuracy: fix.accuracy, speed: fix.speed, bearing: fix.bearing,
                altitude: fix.altitude, trigger: .manual, motion: motion, isMock: fix.isMock, activity: fix.activity,
                quality: FixSanitiser.quality(of: fix.fix, after: gate.last))
            location.locateRequestId = requestID
            let latest = [window?.latest, gate.last?.timestamp].compactMap { $0 }.max()
            let later = latest.map { location.timestamp > $0 } ?? true
            guard session != nil, later else {
                // Not tracking, or a fix older than the last stored one (a source's cached
                // reading): stored as the answer, outside the track, the gate left as it is.
                let held = flushHeld()
                var effects = windowClosed(held)
                let answer: FixEffect = .store(location, crossing: nil, then: [.publish(location), .notifySync])
                effects.append(answer)
                return effects
            }
            return admitted(location, force: true, crossing: nil)
        case .windowClosed(let held):
            return windowClosed(held)
        case .restoredHeld(let held, let lastStored):
            guard lastStored.map({ held.timestamp > $0 }) ?? true else { return [.persistHeld(nil)] }
            // Before the session (re)starts: the gate starts from the store, not from this fix.
            return [.store(held, crossing: nil, then: [.publish(held), .persistHeld(nil)])]
        }
    }

    /// What a stored fix entails, in order: the gate moves on, the fix is emitted, the
    /// upload counts it, the age prune runs when due.
    static func stored(_ location: Location, crossing: FixCrossing?, then more: [FixEffect] = []) -> FixEffect {
        var then: [FixEffect] = [.commit(location), .publish(location), .notifySync, .prune]
        then.append(contentsOf: more)
        return .store(location, crossing: crossing, then: then)
    }

    /// An admitted location through the admission window: what it releases, stored in order
    /// (the crossing with `location` itself, or alone when `location` is held), then the
    /// held fix persisted.
    private mutating func admitted(
        _ location: Location, force: Bool, crossing: FixCrossing?, after: [FixEffect] = []
    ) -> [FixEffect] {
        let release = admit(location, force: force)
        var effects: [FixEffect] = []
        for l in release {
            effects.append(l.id == location.id ? Self.stored(l, crossing: crossing, then: after) : Self.stored(l, crossing: nil))
        }
        if let crossing, !crossing.states.isEmpty, !release.contains(where: { $0.id == location.id }) {
            effects.append(.storeCrossing(crossing))
        }
        if window != nil { effects.append(.persistHeld(held)) }
        return effects
    }

    /// The window's held fix stored now, and the marker cleared.
    private func windowClosed(_ held: Location?) -> [FixEffect] {
        guard let held else { return [] }
        return [Self.stored(held, crossing: nil), .persistHeld(nil)]
    }
}

extension [FixEffect] {
    /// The location a `store` effect (at any depth) stores under `id`.
    func storedLocation(_ id: UUID) -> Location? {
        for effect in self {
            guard case .store(let location, _, let then) = effect else { continue }
            if location.id == id { return location }
            if let found = then.storedLocation(id) { return found }
        }
        return nil
    }
}
