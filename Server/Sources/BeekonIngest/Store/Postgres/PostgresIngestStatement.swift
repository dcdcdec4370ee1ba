import BeekonWire
import Foundation
import PostgresNIO

/// One upload as the ingest statement takes it: the batch, its rows sorted by id (the uuid
/// order PostgreSQL uses), so overlapping batches lock rows in the same order.
struct PostgresIngestUpload: Sendable {
    let batch: IngestBatch
    /// The envelope's rows, sorted by id.
    let locations: [WireLocation]
    let events: [WireGeofenceEvent]

    init(_ batch: IngestBatch) {
        self.batch = batch
        locations = batch.envelope.locations.sorted { PostgresLocationStore.orderKey($0.id) < PostgresLocationStore.orderKey($1.id) }
        events = batch.envelope.geofenceEvents.sorted { PostgresLocationStore.orderKey($0.id) < PostgresLocationStore.orderKey($1.id) }
    }

    /// (batch stored: 0 or 1, locations stored, events stored)
    typealias Outcome = (Int64, Int64, Int64)
}

/// Every upload of a group (or one upload alone) as one statement, prepared once per
/// connection and run in one round trip (autocommit: one statement is one transaction, so
/// the group shares one commit and one fsync). Issue 32: a group is folded into one
/// multi-row insert per table, not one statement per upload.
///
/// Column arrays, unnested: `bs` one row per batch, `u` one row per fix and `v` one per
/// geofence event, each fix and event naming its batch. Data-modifying CTEs: `b` inserts the
/// batch rows (`ON CONFLICT (batch_id) DO NOTHING`); `l` and `g` insert the fixes and geofence
/// events only of the batches `b` inserted (the join with `b`): a geofence event `ON CONFLICT
/// (id) DO NOTHING`, a fix skipped by the row trigger that claims its id in `location_ids` (the
/// dedupe key of the time-partitioned table, which can have no unique index on `id` alone; see
/// `PostgresPartitionSchema`). A concurrent transaction inserting the same batch id makes `b` wait for its
/// commit and then insert nothing, so a replay stores nothing; a fix id already stored (or
/// stored by an earlier batch of the same group) is skipped. Batches arrive in (install,
/// batch id) order and rows are inserted in id order, so two instances' overlapping groups
/// take their row locks in the same order. A batch id twice in one group is sent once
/// (`init(_:)`): the other copy is answered as a duplicate, as it would be one after the other.
///
/// The overview tier: `o` marks the time buckets of the new fixes stale (see `TrackOverview`;
/// a replay stores no fix, so it marks nothing), each (install, bucket) once.
///
/// The event log: `k` takes a transaction-scoped advisory lock once the rows are in (only
/// when something new was stored, so a replay takes no lock and emits nothing); `e` draws
/// the sequence values for the new rows only after that lock is held (the rows of `e` are
/// joined with `k`), and the lock is released only after the commit has become visible. So
/// sequence values become visible in allocation order across instances: a reader that sees
/// `seq = n` already sees every committed `seq < n`. Within a group, events are numbered
/// upload by upload (install, batch id), each upload's in (time, id) order. `n` wakes the
/// live streams of every instance (NOTIFY is delivered at commit).
///
/// The answer: one row per stored batch with its stored fix and event counts (a batch
/// missing from it was a duplicate); see `outcomes`.
struct PostgresIngestStatement: PostgresPreparedStatement {
    static let name = "beekon_ingest_v6"

    static let sql = """
        WITH bs AS (
            SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int8[], $5::int8[], $6::text[], $7::text[],
                                 $8::text[], $9::text[], $10::text[], $11::int4[], $12::int4[], $13::int4[])
                WITH ORDINALITY AS t(batch_id, session_id, install_id, sent_at, received_at, platform, sdk_version,
                                     model, extras, principal, location_count, event_count, expected_interval, ord)),
        b AS (
            INSERT INTO batches (batch_id, session_id, install_id, sent_at, received_at, platform, sdk_version,
                                 model, extras, principal, location_count, event_count, expected_interval)
            SELECT batch_id, session_id, install_id, sent_at, received_at, platform, sdk_version,
                   model, extras::jsonb, principal, location_count, event_count, expected_interval
            FROM bs ORDER BY ord
            ON CONFLICT (batch_id) DO NOTHING RETURNING batch_id, session_id, install_id, received_at),
        u AS (
            SELECT * FROM unnest($14::uuid[], $15::uuid[], $16::int8[], $17::float8[], $18::float8[], $19::text[],
                                 $20::text[], $21::bool[], \(fix.arrays), $\(fix.payload)::text[])
                AS u(bid, id, ts, lat, lon, trg, mot, mock, \(fix.names), payload)),
        l AS (
            INSERT INTO locations (id, install_id, session_id, batch_id, ts, latitude, longitude, trigger, motion,
                                   is_mock, received_at, \(fix.names))
            SELECT u.id, b.install_id, b.session_id, b.batch_id, u.ts, u.lat, u.lon, u.trg, u.mot, u.mock,
                   b.received_at, \(fix.selected)
            FROM u JOIN b ON b.batch_id = u.bid
            ORDER BY u.id, b.install_id, b.batch_id
            RETURNING id, install_id, batch_id, ts, received_at),
        v AS (
            SELECT * FROM unnest($\(fix.payload + 1)::uuid[], $\(fix.payload + 2)::uuid[], $\(fix.payload + 3)::text[],
                                 $\(fix.payload + 4)::text[], $\(fix.payload + 5)::int8[], $\(fix.payload + 6)::text[])
                AS v(bid, id, gid, typ, ts, payload)),
        g AS (
            INSERT INTO geofence_events (id, install_id, session_id, batch_id, geofence_id, type, ts, received_at)
            SELECT v.id, b.install_id, b.session_id, b.batch_id, v.gid, v.typ, v.ts, b.received_at
            FROM v JOIN b ON b.batch_id = v.bid
            ORDER BY v.id, b.install_id, b.batch_id
            ON CONFLICT (id) DO NOTHING RETURNING id, install_id, batch_id, ts, received_at),
        o AS (
            INSERT INTO track_overview_buckets (install_id, bucket, dirty)
            SELECT x.install_id, x.bucket, 1
            FROM (SELECT DISTINCT l.install_id, \(TrackOverview.bucketSQL("l.ts")) AS bucket FROM l) x
            ORDER BY x.install_id, x.bucket
            ON CONFLICT (install_id, bucket) DO UPDATE SET dirty = track_overview_buckets.dirty + 1
            RETURNING 1),
        k AS (
            SELECT pg_advisory_xact_lock(74657002) AS locked
            WHERE (SELECT count(*) FROM l) + (SELECT count(*) FROM g) > 0),
        e AS (
            INSERT INTO events (kind, install_id, ts, received_at, payload)
            SELECT x.kind, x.install_id, x.ts, x.received_at, x.payload FROM (
                SELECT 'fix' AS kind, l.install_id, l.batch_id, l.id, l.ts, l.received_at, u.payload
                FROM l JOIN u ON u.id = l.id AND u.bid = l.batch_id
                UNION ALL
                SELECT 'geofence_event', g.install_id, g.batch_id, g.id, g.ts, g.received_at, v.payload
                FROM g JOIN v ON v.id = g.id AND v.bid = g.batch_id
            ) x CROSS JOIN k
            ORDER BY x.install_id, x.batch_id, x.ts, x.id
            RETURNING seq),
        n AS (SELECT pg_notify('beekon_events', '') FROM k)
        SELECT b.batch_id, coalesce(lc.c, 0), coalesce(gc.c, 0), (SELECT count(*) FROM e) + (SELECT count(*) FROM n)
        FROM b
        LEFT JOIN (SELECT batch_id, count(*) AS c FROM l GROUP BY batch_id) lc ON lc.batch_id = b.batch_id
        LEFT JOIN (SELECT batch_id, count(*) AS c FROM g GROUP BY batch_id) gc ON gc.batch_id = b.batch_id
        """

    /// The optional fix columns' part of ``sql`` (``FixColumn``): their parameters start at $22,
    /// after the columns every fix has; the fix's payload and the geofence events' come after them.
    private static let fix = (
        arrays: FixColumn.all.enumerated().map { "$\(22 + $0)::\(array($1.kind).sql)" }.joined(separator: ", "),
        names: FixColumn.all.map(\.rawValue).joined(separator: ", "),
        selected: FixColumn.all.map { "u.\($0.rawValue)" }.joined(separator: ", "),
        payload: 22 + FixColumn.all.count
    )

    /// The array a column of `kind` is bound as: its SQL cast and its binding's data type.
    private static func array(_ kind: FixColumn.Kind) -> (sql: String, type: PostgresDataType) {
        switch kind {
        case .real: ("float8[]", .float8Array)
        case .text: ("text[]", .textArray)
        }
    }

    static let bindingDataTypes: [PostgresDataType] =
        [
            .uuidArray, .uuidArray, .uuidArray, .int8Array, .int8Array, .textArray, .textArray, .textArray, .textArray,
            .textArray, .int4Array, .int4Array, .int4Array,
            .uuidArray, .uuidArray, .int8Array, .float8Array, .float8Array, .textArray, .textArray, .boolArray,
        ]
        + FixColumn.all.map { array($0.kind).type }
        + [.textArray, .uuidArray, .uuidArray, .textArray, .textArray, .int8Array, .textArray]

    /// (a stored batch, its locations stored, its events stored, log rows + notifications of the whole statement)
    typealias Row = (UUID, Int64, Int64, Int64)

    /// The uploads sent: (install, batch id) order, each batch id once.
    let uploads: [PostgresIngestUpload]

    /// The statement for `uploads` (any order; a batch id repeated is sent once).
    init(_ uploads: [PostgresIngestUpload]) {
        var seen = Set<UUID>()
        self.uploads = uploads.sorted {
            let (a, b) = ($0.batch.envelope, $1.batch.envelope)
            let (ia, ib) = (PostgresLocationStore.orderKey(a.device.installId), PostgresLocationStore.orderKey(b.device.installId))
            return ia != ib ? ia < ib : PostgresLocationStore.orderKey(a.batchId) < PostgresLocationStore.orderKey(b.batchId)
        }.filter { seen.insert($0.batch.envelope.batchId).inserted }
    }

    /// Each of `uploads`' own answer from the statement's `rows`, by position: a batch stored
    /// here gets its counts; one not stored (already stored, or sent earlier in the same group)
    /// is a duplicate.
    static func outcomes(of uploads: [PostgresIngestUpload], rows: [Row]) -> [PostgresIngestUpload.Outcome] {
        var stored = Dictionary(rows.map { ($0.0, ($0.1, $0.2)) }, uniquingKeysWith: { a, _ in a })
        return uploads.map { upload in
            // `removeValue`: a second copy of a batch id in the group is the duplicate.
            guard let (locations, events) = stored.removeValue(forKey: upload.batch.envelope.batchId) else { return (0, 0, 0) }
            return (1, locations, events)
        }
    }

    func makeBindings() throws -> PostgresBindings {
        let bs = uploads.map(\.batch)
        var b = PostgresBindings(capacity: Self.bindingDataTypes.count)
        b.append(bs.map(\.envelope.batchId))
        b.append(bs.map(\.envelope.sessionId))
        b.append(bs.map(\.envelope.device.installId))
        b.append(bs.map(\.envelope.sentAt.millis))
        b.append(bs.map(\.receivedAt.millis))
        b.append(bs.map(\.envelope.device.platform))
        b.append(bs.map(\.envelope.device.sdkVersion))
        b.append(NullableArray(bs.map(\.envelope.device.model)))
        b.append(NullableArray(bs.map { ExtrasJSON.encode($0.envelope.extras) }))
        b.append(NullableArray(bs.map(\.principal)))
        b.append(bs.map { Int32($0.envelope.locations.count) })
        b.append(bs.map { Int32($0.envelope.geofenceEvents.count) })
        b.append(NullableArray(bs.map { $0.declaredInterval.map(Int32.init) }))
        let ls = uploads.flatMap { upload in upload.locations.map { (upload.batch, $0) } }
        b.append(ls.map(\.0.envelope.batchId))
        b.append(ls.map(\.1.id))
        b.append(ls.map(\.1.timestamp.millis))
        b.append(ls.map(\.1.latitude))
        b.append(ls.map(\.1.longitude))
        b.append(ls.map(\.1.trigger.rawValue))
        b.append(ls.map(\.1.motion.rawValue))
        b.append(ls.map(\.1.isMock))
        for column in FixColumn.all {
            switch column.kind {
            case .real: b.append(NullableArray(ls.map { column.value(of: $0.1).real }))
            case .text: b.append(NullableArray(ls.map { column.value(of: $0.1).text }))
            }
        }
        b.append(ls.map { PendingEvent.fixPayload($0.1, $0.0) })
        let gs = uploads.flatMap { upload in upload.events.map { (upload.batch, $0) } }
        b.append(gs.map(\.0.envelope.batchId))
        b.append(gs.map(\.1.id))
        b.append(gs.map(\.1.geofenceId))
        b.append(gs.map(\.1.type.rawValue))
        b.append(gs.map(\.1.timestamp.millis))
        b.append(gs.map { PendingEvent.geofencePayload($0.1, $0.0) })
        return b
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// A one-dimensional PostgreSQL array (binary format) whose elements may be NULL;
/// postgres-nio encodes only arrays of non-optional elements.
struct NullableArray<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>: PostgresNonThrowingEncodable {
    var elements: [Element?]

    init(_ elements: [Element?]) { self.elements = elements }

    static var psqlType: PostgresDataType { Element.psqlArrayType }
    static var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        // Header: dimensions, has-nulls flag, element type; then length and lower bound of the one dimension.
        buffer.writeInteger(elements.isEmpty ? 0 : 1, as: Int32.self)
        buffer.writeInteger(elements.contains { $0 == nil } ? 1 : 0, as: Int32.self)
        buffer.writeInteger(Element.psqlType.rawValue)
        guard !elements.isEmpty else { return }
        buffer.writeInteger(Int32(elements.count), as: Int32.self)
        buffer.writeInteger(1, as: Int32.self)
        for element in elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)  // NULL
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            element.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex, as: Int32.self)
        }
    }
}
