import Foundation

extension Beekon {
    /// Geofence crossings, emitted after they are stored (GF-2): hot, replay-1.
    public nonisolated var geofenceEvents: AsyncStream<GeofenceEvent> { broadcasts.geofenceEvents.stream() }

    /// Adds geofences atomically (GF-1): all or none; an error names the bad entry.
    /// Re-adding an id replaces that fence. Fences are evaluated whenever fixes flow.
    public func addGeofences(_ fences: [Geofence]) async throws(BeekonError) {
        let store = try await ready()
        var engine = core.geofences
        try engine.add(fences)
        try await store.saveGeofences(fences.map { engine.fence(id: $0.id) ?? $0 }, inside: engine.insideIDs)
        core.geofences = engine
        await geofencesDidChange()
    }

    /// Removes geofences by id; unknown ids are ignored.
    public func removeGeofences(ids: [String]) async throws(BeekonError) {
        let store = try await ready()
        var engine = core.geofences
        engine.remove(ids: ids)
        try await store.saveGeofences([], inside: engine.insideIDs, removing: ids)
        core.geofences = engine
        await geofencesDidChange()
    }

    /// Makes `fences` the complete set: adds or replaces them and removes every other fence, atomically.
    public func replaceGeofences(with fences: [Geofence]) async throws(BeekonError) {
        let store = try await ready()
        var engine = core.geofences
        try engine.add(fences)
        let keep = Set(fences.map(\.id))
        let stale = engine.list().map(\.id).filter { !keep.contains($0) }
        engine.remove(ids: stale)
        try await store.saveGeofences(fences.map { engine.fence(id: $0.id) ?? $0 }, inside: engine.insideIDs, removing: stale)
        core.geofences = engine
        await geofencesDidChange()
    }

    /// Every registered geofence, sorted by id.
    public func listGeofences() async throws(BeekonError) -> [Geofence] {
        _ = try await ready()
        return core.geofences.list()
    }

    /// Stored geofence events with `from ≤ timestamp ≤ to`, in time order.
    public func geofenceEventHistory(from: Date, to: Date) async throws(BeekonError) -> [GeofenceEvent] {
        try await ready().geofenceEvents(from: from, to: to)
    }

    /// One fresh fix from the source, independent of tracking (FX-8); nil on timeout.
    /// `accuracy` is the power mode to ask for (e.g. `.high`).
    public func getCurrentLocation(timeout: Duration, accuracy: PowerMode = .high) async -> RawFix? {
        guard let raw = try? await deps.provider.currentLocation(timeout: timeout, mode: accuracy) else { return nil }
        return FixSanitiser.sanitise(raw)?.fix
    }

    /// Tells a provider that pages fences into OS region monitoring (CoreLocation) the
    /// complete fence set, so the OS can wake the app near any of them (GF-4).
    func geofencesDidChange() async {
        guard let observer = deps.provider as? any GeofenceRegionObserver else { return }
        await observer.geofencesChanged(core.geofences.list())
    }

    /// The motion state the stationary detector reports (FX-6).
    public var motion: Motion { core.stationary.detector.motion }
}
