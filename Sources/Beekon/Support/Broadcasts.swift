import Foundation

/// The publishers behind the `Beekon` actor's hot streams.
struct Broadcasts: Sendable {
    /// Lifecycle state (LC-3).
    let state = Broadcast<BeekonState>(initial: .idle)
    /// Admitted fixes, after they are stored (FX-7).
    let positions = Broadcast<Location>()
    /// Upload progress and outcomes (SY-8).
    let syncStatus = Broadcast<SyncStatus>(initial: .idle)
    /// Rotations of the auth token set (AU-9).
    let authChanges = Broadcast<AuthChange>()
    /// Geofence crossings, after they are stored (GF-2).
    let geofenceEvents = Broadcast<GeofenceEvent>()
    /// Beacon proximity transitions, after they are stored (BY-5).
    let proximityEvents = Broadcast<ProximityRecord>()
    /// The platform's location delivery health (XR-1).
    let locationHealth = Broadcast<LocationHealth>(initial: [])
}
