import Foundation

extension Beekon {
    /// Beacon proximity transitions, emitted after they are stored (BY-5): hot, replay-1.
    public nonisolated var proximityEvents: AsyncStream<ProximityRecord> { broadcasts.proximityEvents.stream() }

    /// Stores beacon proximity transitions durably (one transaction, each given a fresh id),
    /// emits them on ``proximityEvents`` and, when sync is configured, uploads them at once
    /// in the envelope's `proximity_events` (BY-5). Returns the stored records with their ids.
    /// Throws `invalidConfiguration` naming the first record schema v1 cannot carry (nothing
    /// is stored then), `storage` when the write fails.
    @discardableResult
    public func recordProximity(_ events: [ProximityRecord]) async throws(BeekonError) -> [ProximityRecord] {
        let store = try await ready()
        guard !events.isEmpty else { return [] }
        if let (i, why) = events.enumerated().lazy.compactMap({ e in e.element.invalidReason.map { (e.offset, $0) } }).first {
            throw .invalidConfiguration("proximity event \(i): \(why)")
        }
        var stored = events
        for i in stored.indices { stored[i].id = deps.makeID() }
        try await store.insertProximity(stored)
        for e in stored {
            logger.info(
                "beacon proximity", metadata: ["region": "\(e.region)", "scanner": "\(e.scanner)", "type": "\(e.transition.rawValue)"])
            broadcasts.proximityEvents.publish(e)
        }
        // Sparse and high-signal, like geofence crossings: upload at once (SY-3).
        if let engine = try await applySync() { await engine.wake(.geofenceEvent) }
        return stored
    }

    /// Stored proximity events with `from ≤ timestamp ≤ to`, in time order.
    public func proximityEventHistory(from: Date, to: Date) async throws(BeekonError) -> [ProximityRecord] {
        try await ready().proximityEvents(from: from, to: to)
    }
}
