/// A location provider that also pages geofences into OS region monitoring (the
/// CoreLocation provider): the SDK tells it the complete fence set whenever it changes.
package protocol GeofenceRegionObserver: Sendable {
    /// The application's complete geofence set, after every change and at first use.
    func geofencesChanged(_ fences: [Geofence]) async
}
