import BeekonWire
import Foundation

/// Error-bounded admission (BY-9) in the actor: the window's decisions stored in order, the
/// held fix persisted after every accepted fix (so kill -9 loses none), and the held fix
/// stored when its window closes for a reason outside the window (pause, stop, restart).
extension Beekon {
    /// Runs an admitted location through the admission window and stores what it releases,
    /// in order; geofence events go in the same transaction as `location` itself. Returns
    /// whether `location`'s events were stored (with it, or alone when it is held).
    func admitAndRecord(
        _ location: Location, force: Bool, events: [GeofenceEventRecord] = [], states: [String: Bool] = [:]
    ) async -> Bool {
        let release = machine.admit(location, force: force)
        var eventsStored = false
        for l in release {
            let own = l.id == location.id
            let stored = await record(l, events: own ? events : [], states: own ? states : [:])
            if own { eventsStored = stored }
        }
        if !release.contains(where: { $0.id == location.id }), !states.isEmpty {
            do {
                try await ready().insertEvents(events, states: states)
                eventsStored = true
            } catch {
                logger.error("could not store geofence events", metadata: ["error": "\(error)"])
            }
        }
        await persistHeld()
        return eventsStored
    }

    /// Stores the held fix now (the stationary pause closes the window before the source sleeps).
    func storeHeld() async {
        guard let held = machine.flushHeld() else { return }
        await record(held)
        await persistHeld(always: true)
    }

    /// Persists the held fix (or its absence) while the mode is on; `always` also when it is off.
    func persistHeld(always: Bool = false) async {
        guard always || machine.window != nil else { return }
        do { try await ready().setHeldFix(machine.held) } catch {
            logger.error("could not persist the held fix", metadata: ["error": "\(error)"])
        }
    }

    /// At `start()` or a resume: a fix held when the process died (kill -9) is stored into its
    /// session, unless a fix at or after its time is already stored there (it was stored
    /// before the marker was cleared). Emitted on `positions` once stored.
    func storePersistedHeld(_ store: LocationStore) async {
        do {
            guard let held = try await store.heldFix() else { return }
            let last = try await store.lastLocation(session: held.sessionId)
            if last.map({ held.timestamp > $0.timestamp }) ?? true {
                stats.trimmed += try await store.insert(held, syncOn: syncOn)
                stats.stored += 1
                broadcasts.positions.publish(held)
                logger.info("stored the fix held when the process ended", metadata: ["id": "\(held.id.wireString)"])
            }
            try await store.setHeldFix(nil)
        } catch {
            logger.error("could not store the held fix", metadata: ["error": "\(error)"])
        }
    }
}
