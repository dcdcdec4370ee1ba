import Beekon
import Foundation

extension ProximityEvent {
    /// The event as the SDK stores and uploads it (BY-5); nil only for an identity whose
    /// identifier is not 16 bytes (never for a decoded frame).
    public var record: ProximityRecord? {
        guard let beacon = UUID(uuidString: identity.uuid) else { return nil }
        return ProximityRecord(
            region: region, beacon: beacon, major: identity.major, minor: identity.minor, scanner: scanner,
            transition: type == .enter ? .enter : .exit, timestamp: timestamp, distance: distance)
    }
}

extension Beekon {
    /// Stores the transitions a ``ProximityTracker`` or ``BeaconRangingSession`` decided,
    /// emits them and uploads them at once (``Beekon/recordProximity(_:)-([ProximityRecord])``).
    @discardableResult
    public func recordProximity(_ events: [ProximityEvent]) async throws(BeekonError) -> [ProximityRecord] {
        try await recordProximity(events.compactMap(\.record))
    }
}
