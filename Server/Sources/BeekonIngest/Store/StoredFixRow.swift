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
/// selects them (``select``: the ``Column``s, then the ``FixColumn``s), and the one decoder of such
/// a row into a ``StoredFix``, for SQLite and PostgreSQL at once.
enum StoredFixRow {
    /// The columns every fix has, in the order they are selected (a case's position is its column index).
    enum Column: String, CaseIterable {
        case id
        case installId = "install_id"
        case sessionId = "session_id"
        case batchId = "batch_id"
        case ts, latitude, longitude, trigger, motion
        case isMock = "is_mock"
        case receivedAt = "received_at"

        /// The column's position in ``StoredFixRow/select``.
        var index: Int { Self.positions[self]! }
        private static let positions = Dictionary(uniqueKeysWithValues: allCases.enumerated().map { ($1, $0) })
    }

    /// The column list of every fix query (`SELECT \(select) FROM locations …`).
    static let select = (Column.allCases.map(\.rawValue) + FixColumn.all.map(\.rawValue)).joined(separator: ", ")

    /// The position of the first ``FixColumn`` in ``select``.
    private static let firstFixColumn = Column.allCases.count

    /// A row selected with ``select`` as a stored fix.
    static func decode(_ row: some StoreRow) throws -> StoredFix {
        func at(_ c: Column) -> Int { c.index }
        var location = WireLocation(
            id: try row.uuid(at(.id)), timestamp: WireTimestamp(millis: try row.int64(at(.ts))),
            trigger: Trigger(rawValue: try row.requiredText(at(.trigger))) ?? .interval,
            motion: Motion(rawValue: try row.requiredText(at(.motion))) ?? .unknown,
            isMock: try row.bool(at(.isMock)), latitude: try row.requiredDouble(at(.latitude)),
            longitude: try row.requiredDouble(at(.longitude)))
        for (i, column) in FixColumn.all.enumerated() {
            try column.read(row, firstFixColumn + i, into: &location)
        }
        return StoredFix(
            location: location, sessionId: try row.uuid(at(.sessionId)), installId: try row.uuid(at(.installId)),
            batchId: try row.uuid(at(.batchId)), receivedAt: WireTimestamp(millis: try row.int64(at(.receivedAt))))
    }
}

/// The optional columns of the `locations` table: each holds one optional field of a wire
/// location, NULL when the fix has none. The one description that the stores' inserts
/// (`SQLiteUpload`, `PostgresIngestStatement`), the fix decoder (``StoredFixRow``) and a schema
/// step that adds such a column (``SchemaStep/addedFixColumn``) all follow. A new optional field
/// of a fix is a case here (its name, its ``Kind``, a line in ``value(of:)`` and in
/// ``read(_:_:into:)``) and a ``SchemaStep`` that adds it.
enum FixColumn: String, CaseIterable, Sendable {
    case accuracy, speed, bearing, altitude, activity, quality
    case privacyZone = "privacy_zone"

    /// Every column in table order, once (`allCases` builds its array on each use; the ingest
    /// path reads this once per fix).
    static let all = allCases

    /// What a column holds.
    enum Kind: Sendable {
        /// A double (`REAL` / `DOUBLE PRECISION`).
        case real
        /// Text (`TEXT`).
        case text
    }

    /// One column's value of one fix, nil for NULL.
    enum Value {
        case real(Double?)
        case text(String?)

        /// The double of a ``Kind/real`` column (nil: NULL, or another kind).
        var real: Double? { if case .real(let x) = self { x } else { nil } }
        /// The text of a ``Kind/text`` column (nil: NULL, or another kind).
        var text: String? { if case .text(let x) = self { x } else { nil } }
    }

    /// What the column holds.
    var kind: Kind {
        switch self {
        case .accuracy, .speed, .bearing, .altitude: .real
        case .activity, .quality, .privacyZone: .text
        }
    }

    /// The column's value of `l`.
    func value(of l: WireLocation) -> Value {
        switch self {
        case .accuracy: .real(l.accuracy)
        case .speed: .real(l.speed)
        case .bearing: .real(l.bearing)
        case .altitude: .real(l.altitude)
        case .activity: .text(l.activity?.rawValue)
        case .quality: .text(l.quality?.rawValue)
        case .privacyZone: .text(l.privacyZone)
        }
    }

    /// Reads the column, selected at position `i` of `row`, into `l`'s field.
    func read(_ row: some StoreRow, _ i: Int, into l: inout WireLocation) throws {
        switch self {
        case .accuracy: l.accuracy = try row.double(i)
        case .speed: l.speed = try row.double(i)
        case .bearing: l.bearing = try row.double(i)
        case .altitude: l.altitude = try row.double(i)
        case .activity: l.activity = try row.text(i).flatMap(Activity.init(rawValue:))
        case .quality: l.quality = try row.text(i).flatMap(Quality.init(rawValue:))
        case .privacyZone: l.privacyZone = try row.text(i)
        }
    }

    /// The SQL dialects a column is declared in.
    enum Dialect { case sqlite, postgres }

    /// The statement that adds the column to an existing `locations` table.
    func addColumn(_ dialect: Dialect) -> String {
        let type =
            switch (kind, dialect) {
            case (.real, .sqlite): "REAL"
            case (.real, .postgres): "DOUBLE PRECISION"
            case (.text, _): "TEXT"
            }
        return "ALTER TABLE locations ADD COLUMN \(rawValue) \(type)"
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
