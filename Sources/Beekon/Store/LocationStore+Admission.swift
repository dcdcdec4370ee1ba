import Foundation
import GRDB

/// The fix the error-bounded admission holds (BY-9), kept in `meta` so that a process
/// killed with a window open (kill -9) loses none of the fixes it had accepted: the next
/// `start()` or resume stores it (it ends a segment that covers every earlier window fix).
extension LocationStore {
    static let heldFixKey = "admission_held_fix"

    /// Replaces the persisted held fix (nil: none). Committed without its own fsync: it
    /// survives the death of the process, and the next stored fix's fsync makes it durable.
    func setHeldFix(_ location: Location?) async throws(BeekonError) {
        let text: String?
        if let location {
            guard let data = try? JSONEncoder().encode(HeldFix(location)) else {
                throw .storage("encoding the held fix")
            }
            text = String(decoding: data, as: UTF8.self)
        } else {
            text = nil
        }
        try await writeUnforced("persisting the held fix") { db in try Self.setMeta(db, Self.heldFixKey, text) }
    }

    /// The persisted held fix, if any (an unreadable one is dropped: nil).
    func heldFix() async throws(BeekonError) -> Location? {
        let text = try await read("reading the held fix") { db in try Self.meta(db, Self.heldFixKey) }
        return text.flatMap { try? JSONDecoder().decode(HeldFix.self, from: Data($0.utf8)) }?.location
    }
}

/// A `Location` as JSON (all of its fields, time in milliseconds since 1970).
private struct HeldFix: Codable {
    var id: UUID, session: UUID, ms: Int64, lat: Double, lon: Double
    var accuracy: Double?, speed: Double?, bearing: Double?, altitude: Double?
    var trigger: Trigger, motion: Motion, isMock: Bool, activity: Activity?, quality: Quality?

    init(_ l: Location) {
        id = l.id; session = l.sessionId; ms = Int64((l.timestamp.timeIntervalSince1970 * 1000).rounded())
        lat = l.latitude; lon = l.longitude; accuracy = l.accuracy; speed = l.speed; bearing = l.bearing
        altitude = l.altitude; trigger = l.trigger; motion = l.motion; isMock = l.isMock
        activity = l.activity; quality = l.quality
    }

    var location: Location {
        Location(id: id, sessionId: session, timestamp: Date(timeIntervalSince1970: Double(ms) / 1000),
                 latitude: lat, longitude: lon, accuracy: accuracy, speed: speed, bearing: bearing,
                 altitude: altitude, trigger: trigger, motion: motion, isMock: isMock, activity: activity, quality: quality)
    }
}
