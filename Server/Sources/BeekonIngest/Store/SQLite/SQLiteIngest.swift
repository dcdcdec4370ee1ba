import BeekonWire
import Foundation
import GRDB
import GRDBSQLite

/// One upload made ready for the SQLite writer (issue 32). SQLite has one writer, so the time
/// an upload holds it is the ingest ceiling: everything that needs no write lock — id strings,
/// argument rows, the live events' payloads — is done here, before the upload is queued.
struct SQLiteUpload: Sendable {
    /// A live event ready to append once its row turns out to be new.
    struct Live: Sendable {
        /// The fix's or geofence event's id (`wireString`).
        var id: String
        /// The event, its payload rendered.
        var event: PendingEvent
    }

    let batch: IngestBatch
    let batchId: String
    let installId: String
    let received: Int64
    /// The `batches` row.
    let batchRow: [DatabaseValue]
    /// `locations` rows, their ids and times, in envelope order.
    let fixRows: [[DatabaseValue]]
    let fixIds: [String]
    let fixMillis: [Int64]
    /// `geofence_events` rows and their ids, in envelope order.
    let geofenceRows: [[DatabaseValue]]
    let geofenceIds: [String]
    /// Every fix and geofence event as a live event, in (time, id) order.
    let live: [Live]

    init(_ batch: IngestBatch) {
        let e = batch.envelope
        self.batch = batch
        let received = batch.receivedAt.millis
        let batchId = e.batchId.wireString
        let sessionId = e.sessionId.wireString
        let installId = e.device.installId.wireString
        self.batchId = batchId
        self.installId = installId
        self.received = received
        func v(_ value: (any DatabaseValueConvertible)?) -> DatabaseValue { value?.databaseValue ?? .null }
        batchRow = [
            v(batchId), v(sessionId), v(installId), v(e.sentAt.millis), v(received), v(e.device.platform),
            v(e.device.sdkVersion), v(e.device.model), v(ExtrasJSON.encode(e.extras)), v(batch.principal),
            v(e.locations.count), v(e.geofenceEvents.count), v(batch.declaredInterval),
        ]
        fixIds = e.locations.map(\.id.wireString)
        fixMillis = e.locations.map(\.timestamp.millis)
        fixRows = zip(e.locations, fixIds).map { l, id in
            // One allocation per row: the values in ``StoredFixRow/Column``'s order, then the
            // optional columns'.
            var row: [DatabaseValue] = []
            row.reserveCapacity(SQLiteLocationStore.fixWidth)
            row.append(v(id))
            row.append(v(installId))
            row.append(v(sessionId))
            row.append(v(batchId))
            row.append(v(l.timestamp.millis))
            row.append(v(l.latitude))
            row.append(v(l.longitude))
            row.append(v(l.trigger.rawValue))
            row.append(v(l.motion.rawValue))
            row.append(v(l.isMock))
            row.append(v(received))
            for column in FixColumn.all {
                switch column.value(of: l) {
                case .real(let x): row.append(v(x))
                case .text(let x): row.append(v(x))
                }
            }
            return row
        }
        geofenceIds = e.geofenceEvents.map(\.id.wireString)
        geofenceRows = zip(e.geofenceEvents, geofenceIds).map { g, id in
            [v(id), v(installId), v(sessionId), v(batchId), v(g.geofenceId), v(g.type.rawValue), v(g.timestamp.millis), v(received)]
        }
        live = PendingEvent.of(batch) { _ in true }.map { Live(id: $0.id.wireString, event: $0) }
    }
}

extension SQLiteLocationStore {
    /// At most this many rows per multi-row statement (18 columns × 64 rows stays far below
    /// SQLite's 32,766 bound parameters); one cached statement per row count.
    static let rowsPerStatement = 64

    /// The `locations` columns a fix row fills, in the order every fix query selects them
    /// (``StoredFixRow/select``: those every fix has, then the optional ones, ``FixColumn``).
    static let fixInsert = "INSERT INTO locations (\(StoredFixRow.select))"
    /// The values of one fix row.
    static let fixWidth = StoredFixRow.Column.allCases.count + FixColumn.all.count

    /// Stores `uploads` in the open transaction with one multi-row statement per table (per 64
    /// rows), and answers each upload in order. The outcome is the same as storing them one after
    /// the other: a batch id or a fix / event id that occurs twice goes to the first upload that
    /// has it, the later one is a duplicate; the live events are appended in upload order, each
    /// upload's in (time, id) order.
    static func store(_ uploads: [SQLiteUpload], into db: Database) throws -> [IngestResult] {
        var newBatches = Set(
            try insertRows(
                db,
                "INSERT INTO batches (batch_id, session_id, install_id, sent_at, received_at, platform, sdk_version, "
                    + "model, extras, principal, location_count, event_count, expected_interval)",
                uploads.map(\.batchRow), "ON CONFLICT (batch_id) DO NOTHING RETURNING batch_id"))
        let isNew = uploads.map { newBatches.remove($0.batchId) != nil }
        let stored = uploads.indices.filter { isNew[$0] }
        var newFixes = Set(
            try insertRows(
                db,
                fixInsert, stored.flatMap { uploads[$0].fixRows }, "ON CONFLICT (id) DO NOTHING RETURNING id"))
        var newGeofence = Set(
            try insertRows(
                db, "INSERT INTO geofence_events (id, install_id, session_id, batch_id, geofence_id, type, ts, received_at)",
                stored.flatMap { uploads[$0].geofenceRows }, "ON CONFLICT (id) DO NOTHING RETURNING id"))
        for upload in uploads { _ = try insertProximity(upload.batch, into: db) }
        var results = uploads.map {
            IngestResult(
                duplicateBatch: true, locationsStored: 0, locationsDuplicate: $0.fixIds.count,
                eventsStored: 0, eventsDuplicate: $0.geofenceIds.count)
        }
        var buckets = Set<OverviewMark>()
        var events: [LiveRow] = []
        for i in stored {
            let u = uploads[i]
            var fresh = Set<String>()
            for (id, millis) in zip(u.fixIds, u.fixMillis) where newFixes.remove(id) != nil {
                fresh.insert(id)
                buckets.insert(OverviewMark(installId: u.installId, bucket: TrackOverview.bucket(millis)))
            }
            let fixes = fresh.count
            var geofence = 0
            for id in u.geofenceIds where newGeofence.remove(id) != nil {
                fresh.insert(id)
                geofence += 1
            }
            results[i] = IngestResult(
                duplicateBatch: false, locationsStored: fixes, locationsDuplicate: u.fixIds.count - fixes,
                eventsStored: geofence, eventsDuplicate: u.geofenceIds.count - geofence)
            for l in u.live where fresh.contains(l.id) {
                events.append(LiveRow(event: l.event, installId: u.installId, received: u.received))
            }
        }
        _ = try insertRows(
            db, "INSERT INTO track_overview_buckets (install_id, bucket, dirty)",
            buckets.sorted { ($0.installId, $0.bucket) < ($1.installId, $1.bucket) }.map {
                [$0.installId.databaseValue, $0.bucket.databaseValue, 1.databaseValue]
            }, "ON CONFLICT (install_id, bucket) DO UPDATE SET dirty = dirty + 1")
        try appendEvents(events, db: db)
        return results
    }

    /// One overview bucket to mark stale.
    struct OverviewMark: Hashable {
        var installId: String
        var bucket: Int64
    }

    /// Runs `head VALUES (…), (…) tail` for `rows`, up to `rowsPerStatement` rows per statement,
    /// with cached statements; with a `RETURNING` column in `tail`, that column's values.
    ///
    /// The values are bound straight onto the prepared statement: building a
    /// `StatementArguments` of every value was a third of the writer's CPU at 1,000 uploads/s
    /// (issue 32). GRDB's documented route for this: `setUncheckedArguments` ("Set arguments
    /// without any validation. Trades safety for performance."), here with no arguments — it
    /// resets the statement, clears its bindings and marks them valid — then each value's own
    /// `StatementBinding.bind(to:at:)` on `sqliteStatement` ("The raw SQLite statement, suitable
    /// for the SQLite C API"). The statement then runs through GRDB as before, which keeps its
    /// bookkeeping (transaction state, observation, errors). The count is checked here instead.
    @discardableResult
    static func insertRows(_ db: Database, _ head: String, _ rows: [[DatabaseValue]], _ tail: String) throws -> [String] {
        guard let width = rows.first?.count else { return [] }
        let one = "(" + Array(repeating: "?", count: width).joined(separator: ",") + ")"
        let returning = tail.contains("RETURNING")
        var out: [String] = []
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + rowsPerStatement, rows.count)]
            let statement = try db.cachedStatement(
                sql: head + " VALUES " + Array(repeating: one, count: chunk.count).joined(separator: ",") + " " + tail)
            try bind(chunk, width: width, to: statement, db)
            if returning {
                out += try String.fetchAll(statement)
            } else {
                try statement.execute()
            }
            start += chunk.count
        }
        return out
    }

    /// Binds `rows` (each `width` values, in order) as the whole of `statement`'s arguments.
    private static func bind(_ rows: ArraySlice<[DatabaseValue]>, width: Int, to statement: Statement, _ db: Database) throws {
        let expected = Int(sqlite3_bind_parameter_count(statement.sqliteStatement))
        guard expected == rows.count * width, rows.allSatisfy({ $0.count == width }) else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "\(rows.count) rows of \(width) values for \(expected) parameters",
                sql: statement.sql)
        }
        statement.setUncheckedArguments(StatementArguments())
        var index: CInt = 1
        for row in rows {
            for value in row {
                let code = value.bind(to: statement.sqliteStatement, at: index)
                guard code == SQLITE_OK else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
                }
                index += 1
            }
        }
    }
}
