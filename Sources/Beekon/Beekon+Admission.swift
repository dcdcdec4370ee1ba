import BeekonWire
import Foundation

/// Error-bounded admission (BY-9) in the actor: the held fix stored when its window closes
/// for a reason outside the window (the stationary pause; stop and a new tolerance come as
/// the machine's actions), and the fix held when the process died stored at the next start.
/// The decisions are the machine's (`TrackingMachine.decide(_:)`), the effects `apply`'s.
extension Beekon {
    /// At `start()` or a resume: a fix held when the process died (kill -9) is stored into its
    /// session, unless a fix at or after its time is already stored there (it was stored
    /// before the marker was cleared). Emitted on `positions` once stored.
    func storePersistedHeld(_ store: LocationStore) async {
        do {
            guard let held = try await store.heldFix() else { return }
            let last = try await store.lastLocation(session: held.sessionId)
            let outcome = await apply(core.machine.decide(.restoredHeld(held, lastStored: last?.timestamp)))
            if outcome.stored.contains(held.id) {
                logger.info("stored the fix held when the process ended", metadata: ["id": "\(held.id.wireString)"])
            }
        } catch {
            logger.error("could not store the held fix", metadata: ["error": "\(error)"])
        }
    }
}
