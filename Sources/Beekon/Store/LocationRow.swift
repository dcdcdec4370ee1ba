import Foundation
import GRDB

/// The `location` table's row. Timestamps are Unix milliseconds; ids are
/// lowercase UUID strings (readable with the sqlite3 shell).
struct LocationRow: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "location"

    var id: String
    var session_id: String
    var ts: Int64
    var latitude: Double
    var longitude: Double
    var accuracy: Double?
    var speed: Double?
    var bearing: Double?
    var altitude: Double?
    var trigger: String
    var motion: String
    var is_mock: Bool
    var activity: String?
    var quality: String?

    init(_ l: Location) {
        id = l.id.wireString; session_id = l.sessionId.wireString; ts = WireTimestamp(l.timestamp).millis
        latitude = l.latitude; longitude = l.longitude; accuracy = l.accuracy; speed = l.speed
        bearing = l.bearing; altitude = l.altitude; trigger = l.trigger.rawValue; motion = l.motion.rawValue
        is_mock = l.isMock; activity = l.activity?.rawValue; quality = l.quality?.rawValue
    }

    /// Rows are only ever written by this SDK, so unknown values mean a newer
    /// writer; they degrade to neutral values instead of failing the read.
    var location: Location {
        Location(
            id: UUID(uuidString: id) ?? UUID(uuid: UUID_NULL_BYTES), sessionId: UUID(uuidString: session_id) ?? UUID(uuid: UUID_NULL_BYTES),
            timestamp: WireTimestamp(millis: ts).date, latitude: latitude, longitude: longitude,
            accuracy: accuracy, speed: speed, bearing: bearing, altitude: altitude,
            trigger: Trigger(rawValue: trigger) ?? .interval, motion: Motion(rawValue: motion) ?? .unknown,
            isMock: is_mock, activity: activity.flatMap(Activity.init(rawValue:)),
            quality: quality.flatMap(Quality.init(rawValue:)))
    }
}

let UUID_NULL_BYTES: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
