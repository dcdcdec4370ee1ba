import BeekonWire
import Foundation
import GRDB

/// The `location` table: timestamps are Unix milliseconds; ids are lowercase
/// UUID strings (readable with the sqlite3 shell). Rows are written and read
/// with cached statements and column indexes — the per-fix hot path.
enum LocationRow {
    /// Inserts one location (upload state pending).
    static func insert(_ l: Location, _ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO location(\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        try statement.execute(arguments: [
            l.id.wireString, l.sessionId.wireString, WireTimestamp(l.timestamp).millis, l.latitude, l.longitude,
            l.accuracy, l.speed, l.bearing, l.altitude, l.trigger.rawValue, l.motion.rawValue, l.isMock,
            l.activity?.rawValue, l.quality?.rawValue, l.locateRequestId?.wireString,
        ])
    }
}

extension LocationRow {
    /// The columns `fetchLocations` reads, in order.
    static let columns =
        "id, session_id, ts, latitude, longitude, accuracy, speed, bearing, altitude, trigger, motion, is_mock, activity, quality, locate_request_id"

    /// Decodes locations straight from rows by column index (the hot path of `history`).
    /// Rows are only ever written by this SDK, so unknown values mean a newer writer;
    /// they degrade to neutral values instead of failing the read.
    /// no Codable machinery, and each session id string is parsed once.
    static func fetchLocations(_ db: Database, where clause: String, arguments: StatementArguments = []) throws -> [Location] {
        var sessions: [String: UUID] = [:]
        var out: [Location] = []
        let cursor = try Row.fetchCursor(db, sql: "SELECT \(columns) FROM location \(clause)", arguments: arguments)
        while let row = try cursor.next() {
            let sid: String = row[1]
            let session: UUID
            if let s = sessions[sid] {
                session = s
            } else {
                session = UUID(wire: sid) ?? UUID(uuid: UUID_NULL_BYTES)
                sessions[sid] = session
            }
            var location =
                Location(
                    id: UUID(wire: row[0] as String) ?? UUID(uuid: UUID_NULL_BYTES), sessionId: session,
                    timestamp: WireTimestamp(millis: row[2]).date, latitude: row[3], longitude: row[4],
                    accuracy: row[5], speed: row[6], bearing: row[7], altitude: row[8],
                    trigger: Trigger(rawValue: row[9]) ?? .interval, motion: Motion(rawValue: row[10]) ?? .unknown,
                    isMock: row[11], activity: (row[12] as String?).flatMap(Activity.init(rawValue:)),
                    quality: (row[13] as String?).flatMap(Quality.init(rawValue:)))
            location.locateRequestId = (row[14] as String?).flatMap { UUID(wire: $0) }
            out.append(location)
        }
        return out
    }
}

let UUID_NULL_BYTES: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
