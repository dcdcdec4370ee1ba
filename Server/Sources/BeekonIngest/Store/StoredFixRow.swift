import BeekonWire
import Foundation
import GRDB
import PostgresNIO

/// A row of a query, read by column position, whatever the store: the one shape that the
/// stores' table decoders (``StoredFixRow``) read, so that each table is decoded once for both.
/// A value the column cannot hold (a stored id that is not a UUID) throws; it never traps.
protocol StoreRow {
    /// Column `i` as a UUID.
    func uuid(_ i: Int) throws -> UUID
    /// Column `i` as a 64-bit integer.
    func int64(_ i: Int) throws -> Int64
    /// Column `i` as a double; nil for NULL.
    func double(_ i: Int) throws -> Double?
    /// Column `i` as text; nil for NULL.
    func text(_ i: Int) throws -> String?
    /// Column `i` as a boolean.
    func bool(_ i: Int) throws -> Bool
}

extension StoreRow {
    /// Column `i`, which may not be NULL, as a double.
    func requiredDouble(_ i: Int) throws -> Double {
        guard let value = try double(i) else { throw StoreError.queryFailed("column \(i) is NULL") }
        return value
    }

    /// Column `i`, which may not be NULL, as text.
    func requiredText(_ i: Int) throws -> String {
        guard let value = try text(i) else { throw StoreError.queryFailed("column \(i) is NULL") }
        return value
    }
}

/// The `locations` table as both stores read it: its columns in the order every fix query
/// selects them (``select``), and the one decoder of such a row into a ``StoredFix``. A new
/// column of a fix is a new case here and a line in ``decode(_:)``, for SQLite and PostgreSQL
/// at once.
enum StoredFixRow {
    /// The columns, in the order they are selected (a case's position is its column index).
    enum Column: String, CaseIterable {
        case id
        case installId = "install_id"
        case sessionId = "session_id"
        case batchId = "batch_id"
        case ts, latitude, longitude, accuracy, speed, bearing, altitude, trigger, motion
        case isMock = "is_mock"
        case activity, quality
        case receivedAt = "received_at"
        case privacyZone = "privacy_zone"

        /// The column's position in ``StoredFixRow/select``.
        var index: Int { Self.positions[self]! }
        private static let positions = Dictionary(uniqueKeysWithValues: allCases.enumerated().map { ($1, $0) })
    }

    /// The column list of every fix query (`SELECT \(select) FROM locations …`).
    static let select = Column.allCases.map(\.rawValue).joined(separator: ", ")

    /// A row selected with ``select`` as a stored fix.
    static func decode(_ row: some StoreRow) throws -> StoredFix {
        func at(_ c: Column) -> Int { c.index }
        let location = WireLocation(
            id: try row.uuid(at(.id)), timestamp: WireTimestamp(millis: try row.int64(at(.ts))),
            trigger: Trigger(rawValue: try row.requiredText(at(.trigger))) ?? .interval,
            motion: Motion(rawValue: try row.requiredText(at(.motion))) ?? .unknown,
            isMock: try row.bool(at(.isMock)), latitude: try row.requiredDouble(at(.latitude)),
            longitude: try row.requiredDouble(at(.longitude)), accuracy: try row.double(at(.accuracy)),
            speed: try row.double(at(.speed)), bearing: try row.double(at(.bearing)), altitude: try row.double(at(.altitude)),
            activity: try row.text(at(.activity)).flatMap(Activity.init(rawValue:)),
            quality: try row.text(at(.quality)).flatMap(Quality.init(rawValue:)), privacyZone: try row.text(at(.privacyZone)))
        return StoredFix(
            location: location, sessionId: try row.uuid(at(.sessionId)), installId: try row.uuid(at(.installId)),
            batchId: try row.uuid(at(.batchId)), receivedAt: WireTimestamp(millis: try row.int64(at(.receivedAt))))
    }
}

/// SQLite stores ids as text and booleans as integers.
/// A NULL where a value must be is a query error (GRDB's non-optional reads would trap).
extension Row: StoreRow {
    func uuid(_ i: Int) throws -> UUID {
        let s = try requiredText(i)
        guard let u = UUID(uuidString: s) else { throw StoreError.queryFailed("stored id '\(s)' is not a UUID") }
        return u
    }
    func int64(_ i: Int) throws -> Int64 {
        guard let value = self[i] as Int64? else { throw StoreError.queryFailed("column \(i) is NULL") }
        return value
    }
    func double(_ i: Int) throws -> Double? { self[i] }
    func text(_ i: Int) throws -> String? { self[i] }
    func bool(_ i: Int) throws -> Bool {
        guard let value = self[i] as Bool? else { throw StoreError.queryFailed("column \(i) is NULL") }
        return value
    }
}

/// PostgreSQL has the types themselves.
extension PostgresRandomAccessRow: StoreRow {
    func uuid(_ i: Int) throws -> UUID { try self[i].decode(UUID.self) }
    func int64(_ i: Int) throws -> Int64 { try self[i].decode(Int64.self) }
    func double(_ i: Int) throws -> Double? { try self[i].decode(Double?.self) }
    func text(_ i: Int) throws -> String? { try self[i].decode(String?.self) }
    func bool(_ i: Int) throws -> Bool { try self[i].decode(Bool.self) }
}
