import BeekonWire
import Foundation
import GRDB

/// Geofences and their inside/outside state (GF-1, GF-3), and geofence events (GF-2).
extension LocationStore {
    static func insertEvents(_ db: Database, _ events: [GeofenceEventRecord], states: [String: Bool]) throws {
        for e in events {
            try db.execute(
                sql: """
                    INSERT INTO geofence_event(id, geofence_id, type, ts, session_id) VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [
                    e.id.wireString, e.geofenceId, e.transition.rawValue,
                    WireTimestamp(e.timestamp).millis, e.sessionId?.wireString,
                ])
        }
        for (id, inside) in states {
            try db.execute(sql: "UPDATE geofence SET inside = ? WHERE id = ?", arguments: [inside, id])
        }
    }

    /// Every stored geofence and the ids the device is inside.
    func loadGeofences() async throws(BeekonError) -> ([Geofence], Set<String>) {
        try await read("reading geofences") { db in
            var inside = Set<String>()
            let fences = try Row.fetchAll(db, sql: "SELECT * FROM geofence ORDER BY id").map { row -> Geofence in
                let id: String = row["id"]
                if row["inside"] as Bool { inside.insert(id) }
                return Geofence(
                    id: id, latitude: row["latitude"], longitude: row["longitude"],
                    radiusMeters: row["radius_meters"], notifyOnEntry: row["notify_on_entry"],
                    notifyOnExit: row["notify_on_exit"])
            }
            return (fences, inside)
        }
    }

    /// Inserts or replaces fences (by id) with their current state, and deletes `removing`, atomically.
    func saveGeofences(_ fences: [Geofence], inside: Set<String>, removing: [String] = []) async throws(BeekonError) {
        try await write("saving geofences") { db in
            for id in removing { try db.execute(sql: "DELETE FROM geofence WHERE id = ?", arguments: [id]) }
            for f in fences {
                try db.execute(
                    sql: """
                        INSERT INTO geofence(id, latitude, longitude, radius_meters, notify_on_entry, notify_on_exit, inside)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT(id) DO UPDATE SET latitude = excluded.latitude, longitude = excluded.longitude,
                            radius_meters = excluded.radius_meters, notify_on_entry = excluded.notify_on_entry,
                            notify_on_exit = excluded.notify_on_exit, inside = excluded.inside
                        """,
                    arguments: [
                        f.id, f.latitude, f.longitude, f.radiusMeters, f.notifyOnEntry, f.notifyOnExit,
                        inside.contains(f.id),
                    ])
            }
        }
    }

    /// Stores geofence events that come without a stored fix (the crossing fix was not later
    /// than the last admitted one), with the fences' new state.
    func insertEvents(_ events: [GeofenceEventRecord], states: [String: Bool]) async throws(BeekonError) {
        try await write("storing geofence events") { db in try Self.insertEvents(db, events, states: states) }
    }

    /// Stored geofence events with `from ≤ timestamp ≤ to`, in time order.
    func geofenceEvents(from: Date, to: Date) async throws(BeekonError) -> [GeofenceEvent] {
        let lo = WireTimestamp(from).millis
        let hi = WireTimestamp(to).millis
        return try await read("reading geofence events") { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM geofence_event WHERE ts BETWEEN ? AND ? ORDER BY ts, id",
                arguments: [lo, hi]
            ).compactMap(Self.eventRecord).map {
                GeofenceEvent(id: $0.id, geofenceId: $0.geofenceId, transition: $0.transition, timestamp: $0.timestamp)
            }
        }
    }

    /// Persists the motion state for `beekon status`.
    func setMotion(_ motion: Motion) async throws(BeekonError) {
        try await write("saving the motion state") { db in try Self.setMeta(db, "motion", motion.rawValue) }
    }
}
