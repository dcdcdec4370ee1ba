import BeekonWire
import Foundation

/// One geofence crossing (GF-2): persisted, emitted on `geofenceEvents` and
/// uploaded in the next batch's `geofence_events`.
public struct GeofenceEvent: Sendable, Hashable, Codable, Identifiable {
    /// Event id (UUIDv7).
    public var id: UUID
    /// The `Geofence.id` of the fence that was crossed.
    public var geofenceId: String
    /// Enter or exit.
    public var transition: GeofenceTransition
    /// The timestamp of the fix that crossed the fence, at millisecond precision.
    public var timestamp: Date

    /// Creates an event.
    public init(id: UUID, geofenceId: String, transition: GeofenceTransition, timestamp: Date) {
        self.id = id
        self.geofenceId = geofenceId
        self.transition = transition
        self.timestamp = timestamp
    }

    /// The schema-v1 form of this event.
    package var wire: WireGeofenceEvent {
        WireGeofenceEvent(id: id, geofenceId: geofenceId, type: transition, timestamp: WireTimestamp(timestamp))
    }
}
