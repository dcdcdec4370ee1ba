import BeekonWire
import Foundation
import PostgresNIO

/// The whole of one `ingest` as one statement, prepared once per connection and run
/// in one round trip (autocommit: one statement is one transaction).
///
/// Data-modifying CTEs: `b` inserts the batch row (`ON CONFLICT (batch_id) DO NOTHING`);
/// `l` and `g` insert the fixes and geofence events from column arrays (`unnest`) only
/// when `b` inserted (`WHERE EXISTS (SELECT FROM b)`); a geofence event `ON CONFLICT (id) DO
/// NOTHING`, a fix skipped by the trigger that claims its id in `location_ids` (the dedupe key
/// of the time-partitioned table; see `PostgresPartitionSchema`). A concurrent transaction
/// inserting the same batch id makes `b` wait for its commit and then insert nothing, so a
/// replay stores nothing; a fix id already stored is skipped. Rows arrive in the arrays in id order (see `PostgresLocationStore.ingest`),
/// so overlapping batches take their row locks in the same order.
///
/// The overview tier: `o` marks the time buckets of the new fixes stale (see
/// `TrackOverview`; a replay stores no fix, so it marks nothing).
///
/// The event log: `k` takes a transaction-scoped advisory lock once the rows are in
/// (only when something new was stored, so a replay takes no lock and emits nothing);
/// `e` draws the sequence values for the new rows only after that lock is held (the
/// rows of `e` are joined with `k`), and the lock is released only after the commit
/// has become visible. So sequence values become visible in allocation order: a
/// reader that sees `seq = n` already sees every committed `seq < n`. `n` wakes the
/// live streams of every instance (NOTIFY is delivered at commit).
struct PostgresIngestStatement: PostgresPreparedStatement {
    static let name = "beekon_ingest_v5"

    static let sql = """
        WITH b AS (
            INSERT INTO batches (batch_id, session_id, install_id, sent_at, received_at, platform, sdk_version,
                                 model, extras, principal, location_count, event_count, expected_interval)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $32)
            ON CONFLICT (batch_id) DO NOTHING RETURNING 1),
        l AS (
            INSERT INTO locations (id, install_id, session_id, batch_id, ts, latitude, longitude, accuracy,
                                   speed, bearing, altitude, trigger, motion, is_mock, activity, quality, received_at,
                                   privacy_zone)
            SELECT u.id, $3, $2, $1, u.ts, u.lat, u.lon, u.acc, u.spd, u.brg, u.alt, u.trg, u.mot, u.mock, u.act, u.qual, $5,
                   u.zone
            FROM unnest($13::uuid[], $14::int8[], $15::float8[], $16::float8[], $17::float8[], $18::float8[],
                        $19::float8[], $20::float8[], $21::text[], $22::text[], $23::bool[], $24::text[], $25::text[],
                        $33::text[])
                 AS u(id, ts, lat, lon, acc, spd, brg, alt, trg, mot, mock, act, qual, zone)
            WHERE EXISTS (SELECT FROM b)
            RETURNING id, ts),
        g AS (
            INSERT INTO geofence_events (id, install_id, session_id, batch_id, geofence_id, type, ts, received_at)
            SELECT v.id, $3, $2, $1, v.gid, v.typ, v.ts, $5
            FROM unnest($26::uuid[], $27::text[], $28::text[], $29::int8[]) AS v(id, gid, typ, ts)
            WHERE EXISTS (SELECT FROM b)
            ON CONFLICT (id) DO NOTHING RETURNING id, ts),
        o AS (
            INSERT INTO track_overview_buckets (install_id, bucket, dirty)
            SELECT $3, x.bucket, 1 FROM (SELECT DISTINCT \(TrackOverview.bucketSQL("l.ts")) AS bucket FROM l) x ORDER BY x.bucket
            ON CONFLICT (install_id, bucket) DO UPDATE SET dirty = track_overview_buckets.dirty + 1
            RETURNING 1),
        k AS (
            SELECT pg_advisory_xact_lock(74657002) AS locked FROM b
            WHERE (SELECT count(*) FROM l) + (SELECT count(*) FROM g) > 0),
        e AS (
            INSERT INTO events (kind, install_id, ts, received_at, payload)
            SELECT x.kind, $3, x.ts, $5, x.payload FROM (
                SELECT 'fix' AS kind, l.id, l.ts, p.payload FROM l JOIN unnest($13::uuid[], $30::text[]) AS p(id, payload) ON p.id = l.id
                UNION ALL
                SELECT 'geofence_event', g.id, g.ts, q.payload FROM g JOIN unnest($26::uuid[], $31::text[]) AS q(id, payload) ON q.id = g.id
            ) x CROSS JOIN k
            ORDER BY x.ts, x.id
            RETURNING seq),
        n AS (SELECT pg_notify('beekon_events', '') FROM k)
        SELECT (SELECT count(*) FROM b), (SELECT count(*) FROM l), (SELECT count(*) FROM g),
               (SELECT count(*) FROM e) + (SELECT count(*) FROM n)
        """

    static let bindingDataTypes: [PostgresDataType] = [
        .uuid, .uuid, .uuid, .int8, .int8, .text, .text, .text, .text, .text, .int4, .int4,
        .uuidArray, .int8Array, .float8Array, .float8Array, .float8Array, .float8Array, .float8Array, .float8Array,
        .textArray, .textArray, .boolArray, .textArray, .textArray,
        .uuidArray, .textArray, .textArray, .int8Array,
        .textArray, .textArray, .int4, .textArray,
    ]

    /// (batch rows inserted: 0 or 1, locations inserted, events inserted, log rows + notifications)
    typealias Row = (Int64, Int64, Int64, Int64)

    let batch: IngestBatch
    /// The envelope's rows, sorted by id.
    let locations: [WireLocation]
    let events: [WireGeofenceEvent]

    func makeBindings() throws -> PostgresBindings {
        let e = batch.envelope
        var b = PostgresBindings(capacity: 32)
        b.append(e.batchId)
        b.append(e.sessionId)
        b.append(e.device.installId)
        b.append(e.sentAt.millis)
        b.append(batch.receivedAt.millis)
        b.append(e.device.platform)
        b.append(e.device.sdkVersion)
        b.append(e.device.model)
        b.append(ExtrasJSON.encode(e.extras))
        b.append(batch.principal)
        b.append(Int32(e.locations.count))
        b.append(Int32(e.geofenceEvents.count))
        let ls = locations
        b.append(ls.map(\.id))
        b.append(ls.map(\.timestamp.millis))
        b.append(ls.map(\.latitude))
        b.append(ls.map(\.longitude))
        b.append(NullableArray(ls.map(\.accuracy)))
        b.append(NullableArray(ls.map(\.speed)))
        b.append(NullableArray(ls.map(\.bearing)))
        b.append(NullableArray(ls.map(\.altitude)))
        b.append(ls.map(\.trigger.rawValue))
        b.append(ls.map(\.motion.rawValue))
        b.append(ls.map(\.isMock))
        b.append(NullableArray(ls.map(\.activity?.rawValue)))
        b.append(NullableArray(ls.map(\.quality?.rawValue)))
        b.append(events.map(\.id))
        b.append(events.map(\.geofenceId))
        b.append(events.map(\.type.rawValue))
        b.append(events.map(\.timestamp.millis))
        b.append(ls.map { PendingEvent.fixPayload($0, batch) })
        b.append(events.map { PendingEvent.geofencePayload($0, batch) })
        b.append(batch.declaredInterval.map(Int32.init))
        b.append(NullableArray(ls.map(\.privacyZone)))
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
