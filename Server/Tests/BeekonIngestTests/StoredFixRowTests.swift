import BeekonWire
import Foundation
import GRDB
import Testing

@testable import BeekonIngest

/// The one decoder of a `locations` row, shared by SQLite and PostgreSQL (the store contract
/// and differential suites read fixes back through it on both): what it makes of a row, and
/// that a row it cannot read is a query error rather than a trap.
@Suite("Stored fix rows")
struct StoredFixRowTests {
    /// One row in `StoredFixRow.select` order, from SQLite, with `overrides` by column name.
    static func row(_ overrides: [String: (any DatabaseValueConvertible)?] = [:]) throws -> Row {
        let values: [String: (any DatabaseValueConvertible)?] = [
            "id": "0190a000-0000-7000-8000-000000000001", "install_id": "0190a000-0000-7000-8000-000000000002",
            "session_id": "0190a000-0000-7000-8000-000000000003", "batch_id": "0190a000-0000-7000-8000-000000000004",
            "ts": Int64(1_700_000_000_000), "latitude": 48.1, "longitude": 11.5, "accuracy": 5.0, "speed": nil, "bearing": 90.0,
            "altitude": nil, "trigger": "geofence", "motion": "moving", "is_mock": false, "activity": "walking", "quality": nil,
            "received_at": Int64(1_700_000_001_000), "privacy_zone": "home",
        ].merging(overrides) { $1 }
        let arguments = StoredFixRow.select.split(separator: ", ").map { values[String($0)] ?? nil }
        let placeholders = Array(repeating: "?", count: arguments.count).joined(separator: ", ")
        return try DatabaseQueue().read { db in
            try Row.fetchOne(db, sql: "SELECT \(placeholders)", arguments: StatementArguments(arguments))!
        }
    }

    @Test func everyColumnLandsInItsField() throws {
        let fix = try StoredFixRow.decode(Self.row())
        #expect(fix.location.id.uuidString.lowercased() == "0190a000-0000-7000-8000-000000000001")
        #expect(fix.installId.uuidString.lowercased() == "0190a000-0000-7000-8000-000000000002")
        #expect(fix.sessionId.uuidString.lowercased() == "0190a000-0000-7000-8000-000000000003")
        #expect(fix.batchId.uuidString.lowercased() == "0190a000-0000-7000-8000-000000000004")
        #expect(fix.location.timestamp.millis == 1_700_000_000_000)
        #expect(fix.receivedAt.millis == 1_700_000_001_000)
        #expect(fix.location.latitude == 48.1 && fix.location.longitude == 11.5)
        #expect(fix.location.accuracy == 5 && fix.location.speed == nil && fix.location.bearing == 90 && fix.location.altitude == nil)
        #expect(fix.location.trigger == .geofence && fix.location.motion == .moving && !fix.location.isMock)
        #expect(fix.location.activity == .walking && fix.location.quality == nil && fix.location.privacyZone == "home")
    }

    @Test func theSelectListNamesEveryColumnOnceInCaseOrder() {
        let names = StoredFixRow.select.split(separator: ", ").map(String.init)
        #expect(names == StoredFixRow.Column.allCases.map(\.rawValue) + FixColumn.allCases.map(\.rawValue))
        #expect(Set(names).count == names.count)
        #expect(StoredFixRow.Column.allCases.enumerated().allSatisfy { $0.offset == $0.element.index })
    }

    /// Both stores' inserts take the optional columns from ``FixColumn``: SQLite names each once,
    /// and PostgreSQL's statement has one typed parameter per binding.
    @Test func theInsertsNameEveryFixColumn() throws {
        for column in FixColumn.allCases {
            #expect(SQLiteLocationStore.fixInsert.components(separatedBy: " \(column.rawValue)").count == 2, "\(column)")
            #expect(PostgresIngestStatement.sql.contains("u.\(column.rawValue)"), "\(column)")
        }
        #expect(SQLiteLocationStore.fixWidth == StoredFixRow.select.split(separator: ", ").count)
        let numbers = PostgresIngestStatement.sql.matches(of: /\$([0-9]+)::/).compactMap { Int($0.1) }
        #expect(numbers.sorted() == Array(1...PostgresIngestStatement.bindingDataTypes.count))
    }

    @Test(arguments: [
        ("id", "not-a-uuid" as String?),
        ("latitude", nil),
        ("ts", nil),
        ("is_mock", nil),
        ("batch_id", nil),
    ])
    func aRowItCannotReadIsAQueryErrorNotATrap(column: String, value: String?) throws {
        let row = try Self.row([column: value])
        #expect(throws: StoreError.self) { try StoredFixRow.decode(row) }
    }
}
